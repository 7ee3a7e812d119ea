// The gateway's bearer tokens as the tokens file holds them (docs/access.md), a setting read at start
// and on SIGHUP: the file read and checked against its schema, naming the entry at fault, and a new
// token with its entry (`npm run token`). What a presented token may read is the gateway's
// (src/http/tokens.ts).

import { createHash, randomBytes } from 'node:crypto'
import type { Static } from 'typebox'
import { Compile, Type } from '../vendor/typebox.js'
import { StartError } from '../start-error.js'
import { TOKEN_PATTERN } from '../domain/wire/key-shapes.js'
import { MAX_VALUES } from '../domain/wire/schemas.js'

const NAME_PATTERN = '^[A-Za-z0-9_.@:-]{1,64}$'

export const TokenEntry = Type.Object({
  name: Type.String({ pattern: NAME_PATTERN, description: 'Who holds the token, as the log names it: 1 to 64 of A-Z a-z 0-9 _ . @ : -.' }),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'The SHA-256 of the token, 64 lower-case hex digits; the token itself is never stored.' }),
  nodes: Type.Union([
    Type.Literal('*', { description: 'Every node.' }),
    // At most as many as one filter takes: a token naming none is given them as its `node` values.
    Type.Array(Type.String({ pattern: TOKEN_PATTERN, maxLength: 256 }), { minItems: 1, maxItems: MAX_VALUES, description: `Only these nodes (and the registry): 1 to ${MAX_VALUES}.` })
  ], { description: 'The nodes whose needs, applied and collect entries the token reads.' }),
  metrics: Type.Optional(Type.Boolean({ description: 'Whether the token reads /metrics (the scraper\'s).' }))
}, { additionalProperties: false })
export type TokenEntry = Static<typeof TokenEntry>

export const TokensFile = Type.Object({
  tokens: Type.Array(Type.Unknown(), { description: 'The tokens; each is checked on its own so that a fault names its entry.' })
}, { additionalProperties: false })

/** A token as the gateway holds it: its name, its digest, and what it may read. */
export interface Token {
  readonly name: string
  /** The token's SHA-256, hex. */
  readonly sha256: string
  readonly nodes: '*' | readonly string[]
  readonly metrics: boolean
}

/** A tokens file, or an entry of one, that will not do, naming the entry and what to change. */
const tokensError = (message: string): StartError => new StartError('TOKENS_FILE_INVALID', message)

const ENTRY = '{"name":"ace","sha256":"<64 hex digits>","nodes":["ace"]}'
const SHAPE = `{"tokens":[{"name":"console","sha256":"<64 hex digits>","nodes":"*","metrics":true},${ENTRY}]}`
const FIELD_TAKES: Record<string, string> = {
  name: 'name takes 1 to 64 of A-Z a-z 0-9 _ . @ : -',
  sha256: 'sha256 takes the SHA-256 of the token as 64 lower-case hex digits (npm run token makes a token and its line)',
  nodes: `nodes takes "*" or a list of 1 to ${MAX_VALUES} node names`,
  metrics: 'metrics takes true or false'
}

const checkFile = Compile(TokensFile)
const checkEntry = Compile(TokenEntry)
const checkName = Compile(TokenEntry.properties.name)

/** The SHA-256 of a token, as the tokens file holds it (hex) and the gateway compares it (src/http/tokens.ts). */
export function sha256 (text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest()
}

/** Why one entry does not fit, in words that name the field at fault. */
function entryFault (entry: unknown): string {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return `it is not an object; each token takes the shape ${ENTRY}`
  const [, errors] = checkEntry.Errors(entry)
  const error = errors[0]
  const field = error?.instancePath.split('/')[1]
  if (field !== undefined && field in FIELD_TAKES) return FIELD_TAKES[field] as string
  const fields = Object.keys(TokenEntry.properties)
  const extra = Object.keys(entry).find((k) => !fields.includes(k))
  if (extra !== undefined) return `"${extra}" is not a field of a token; it takes ${fields.join(', ')}`
  const missing = fields.find((k) => !(k in entry) && k !== 'metrics')
  return missing === undefined ? error?.message ?? 'it does not fit' : `it has no ${missing}; ${FIELD_TAKES[missing] as string}`
}

/** Reads a tokens file's JSON text (`source` names it in errors); refuses it naming the entry at fault. */
export function parseTokens (text: string, source: string): readonly Token[] {
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (err) {
    throw tokensError(`${source} is not JSON (${(err as Error).message}); it takes ${SHAPE}`)
  }
  if (!checkFile.Check(data)) throw tokensError(`${source} does not fit: it takes ${SHAPE}`)
  const names = new Map<string, number>()
  const digests = new Map<string, string>()
  return data.tokens.map((entry, index) => {
    const named = entry !== null && typeof entry === 'object' && 'name' in entry && checkName.Check(entry.name) ? entry.name : undefined
    const which = named === undefined ? `token #${index + 1}` : `token "${named}"`
    if (!checkEntry.Check(entry)) throw tokensError(`${source}: ${which}: ${entryFault(entry)}`)
    const earlier = names.get(entry.name)
    if (earlier !== undefined) throw tokensError(`${source}: ${which} is named twice (#${earlier + 1} and #${index + 1}); give each token its own name`)
    names.set(entry.name, index)
    const twin = digests.get(entry.sha256)
    if (twin !== undefined) throw tokensError(`${source}: ${which} has the same sha256 as token "${twin}"; give each reader a token of its own`)
    digests.set(entry.sha256, entry.name)
    return Object.freeze({
      name: entry.name,
      sha256: entry.sha256,
      nodes: entry.nodes === '*' ? '*' : Object.freeze([...entry.nodes]),
      metrics: entry.metrics === true
    })
  })
}

/** A new random token and the tokens file entry that admits it (`npm run token`). */
export function newToken (name: string, nodes: '*' | readonly string[], metrics: boolean): { token: string, entry: TokenEntry } {
  const token = randomBytes(32).toString('base64url')
  const entry: TokenEntry = { name, sha256: sha256(token).toString('hex'), nodes: nodes === '*' ? '*' : [...nodes], ...(metrics ? { metrics } : {}) }
  if (!checkEntry.Check(entry)) throw tokensError(`token "${name}": ${entryFault(entry)}`)
  return { token, entry }
}
