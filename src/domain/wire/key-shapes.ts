// The four buckets' key shapes, made from their descriptions (buckets.ts), and the reading of a key
// into its fields: used by the views, the queries, the registry writer, the demo and the tests.

import { BUCKET_DESCRIPTIONS, FIELD_DESCRIPTIONS, isDecoded, perBucket, WHATS, type FieldDescription, type What } from './buckets.js'

export { isDecoded, WHATS, type What } from './buckets.js'

/** Each bucket's name in NATS. */
export const BUCKETS = perBucket((w) => BUCKET_DESCRIPTIONS[w].bucket) as { readonly [W in What]: (typeof BUCKET_DESCRIPTIONS)[W]['bucket'] }

/** A key token: one or more of A-Z a-z 0-9 _ - / = (docs/buckets.md). */
const TOKEN_SOURCE = '[A-Za-z0-9_\\-/=]+'
export const TOKEN_PATTERN = `^${TOKEN_SOURCE}$`
const TOKEN = new RegExp(TOKEN_PATTERN)

/** The name of each field of a bucket's key, in token order (buckets.ts). */
export const FIELDS = perBucket((w) => BUCKET_DESCRIPTIONS[w].key) as { readonly [W in What]: (typeof BUCKET_DESCRIPTIONS)[W]['key'] }

export type Fields<W extends What> = Record<(typeof FIELDS)[W][number], string>

/** How a field's value is written in its token, for the fields that are not the token itself. */
type Codec = NonNullable<FieldDescription['codec']>
const CODEC = (name: string): Codec | undefined => (FIELD_DESCRIPTIONS as Record<string, FieldDescription>)[name]?.codec

/** Each bucket's codecs in token order, looked up once rather than per key read. */
const CODECS = perBucket((w) => (FIELDS[w] as readonly string[]).map(CODEC))

export function shapeOf (what: What): string {
  return FIELDS[what].map((f) => `<${f}>`).join('.')
}

/** A key read into its field values, in the order of FIELDS[what] (collections decoded). */
const SHAPE_LEAD = Object.fromEntries(WHATS.map((w) => [w, `${w} keys are ${shapeOf(w)}`])) as Record<What, string>

/**
 * A whole key of each bucket's shape, every token well formed: the usual key is read with this one
 * test instead of one per token (a view reads each key twice while it loads: ~40 ms at 300k keys).
 */
const WELL_FORMED = Object.fromEntries(WHATS.map((w) => [w, new RegExp(`^${TOKEN_SOURCE}(?:\\.${TOKEN_SOURCE}){${FIELDS[w].length - 1}}$`)])) as Record<What, RegExp>

/** Buckets whose keys have no field to decode: a well-formed key's tokens are its values. */
const UNDECODED = new Set(WHATS.filter((w) => !FIELDS[w].some(isDecoded)))

/** Per ASCII byte, whether a token may hold it: read off TOKEN, so that the two cannot differ. */
const TOKEN_BYTE = Uint8Array.from({ length: 128 }, (_, b) => TOKEN.test(String.fromCharCode(b)) ? 1 : 0)
const DOT = 0x2e

/**
 * Whether a key given as the bytes it arrived in fits its bucket's shape and is its own fields
 * (every token well formed, none to decode): WELL_FORMED's test with no string made, for a load
 * that reads millions of keys. False says only "read it as a string": a bucket that decodes a
 * field, a byte past ASCII (never in a token) or any other miss goes the way of `parseKey`.
 */
export function wellFormedBytes (what: What, key: Uint8Array): boolean {
  if (!UNDECODED.has(what)) return false
  let dots = 0
  let tokenLength = 0
  for (let i = 0; i < key.length; i++) {
    const b = key[i] as number
    if (b === DOT) {
      if (tokenLength === 0) return false
      dots++
      tokenLength = 0
    } else if (b < 128 && TOKEN_BYTE[b] === 1) tokenLength++
    else return false
  }
  return tokenLength !== 0 && dots === FIELDS[what].length - 1
}

export type ParsedKey =
  | { ok: true, values: string[] }
  | { ok: false, reason: string }

/** Reads a key into its fields, or says in words why it does not fit its bucket's shape. */
export function parseKey (what: What, key: string): ParsedKey {
  const names = FIELDS[what]
  const codecs = CODECS[what]
  const tokens = key.split('.')
  if (UNDECODED.has(what) && WELL_FORMED[what].test(key)) return { ok: true, values: tokens }
  const lead = SHAPE_LEAD[what]
  if (tokens.length !== names.length) {
    return { ok: false, reason: `${lead}: this one has ${tokens.length} token${tokens.length === 1 ? '' : 's'}` }
  }
  const values: string[] = tokens
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string
    const token = tokens[i] as string
    if (!TOKEN.test(token)) {
      return { ok: false, reason: `${lead}: <${name}> ${token === '' ? 'is empty' : `"${token}" holds a character a token cannot (A-Z a-z 0-9 _ - / = only)`}` }
    }
    const codec = codecs[i]
    if (codec) {
      const decoded = codec.decode(token)
      if (!decoded.ok) return { ok: false, reason: `${lead}: <${name}> "${token}" is not an encoded name: ${decoded.reason}` }
      values[i] = decoded.name
    }
  }
  return { ok: true, values }
}

/** Why a key does not fit its bucket's shape, or undefined when it does: the usual key costs one test, no split. */
export function shapeProblem (what: What, key: string): string | undefined {
  if (UNDECODED.has(what) && WELL_FORMED[what].test(key)) return undefined
  const parsed = parseKey(what, key)
  return parsed.ok ? undefined : parsed.reason
}

/**
 * The fields of a key known to fit its bucket's shape (a key the store holds): where the bucket
 * decodes no field they are its tokens, not checked again (a load's index build reads every key,
 * and the check was half of that read).
 */
export function fieldsOf (what: What, key: string): string[] {
  if (UNDECODED.has(what)) return key.split('.')
  const parsed = parseKey(what, key)
  if (!parsed.ok) throw new Error(`${key} does not fit the shape of ${what} keys: ${parsed.reason}`)
  return parsed.values
}

/** The token a field's value is written as in a key (collections are escaped). */
export function tokenOf (field: string, value: string): string {
  return CODEC(field)?.encode(value) ?? value
}

/** The key for the given fields; used by writers of test data and the demo. */
export function keyOf<W extends What> (what: W, fields: Fields<W>): string {
  return FIELDS[what].map((f) => tokenOf(f, (fields as Record<string, string>)[f] as string)).join('.')
}
