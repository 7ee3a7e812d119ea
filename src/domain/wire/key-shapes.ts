// The four buckets, their key shapes and the reading of a key into its fields: defined once, used
// by the views, the queries, the registry writer, the demo and the tests.

import { decodeCollection, encodeCollection } from './collection-name.js'

export const BUCKETS = {
  registry: 'mesh-provisioner_registry',
  needs: 'mesh-provisioner_needs',
  applied: 'mesh-provisioner_applied',
  collect: 'mesh-provisioner_collect'
} as const

export type What = keyof typeof BUCKETS
export const WHATS = Object.keys(BUCKETS) as What[]

/** A key token: one or more of A-Z a-z 0-9 _ - / = (SPEC §2). */
const TOKEN_SOURCE = '[A-Za-z0-9_\\-/=]+'
export const TOKEN_PATTERN = `^${TOKEN_SOURCE}$`
const TOKEN = new RegExp(TOKEN_PATTERN)

/** The name of each field of a bucket's key, in token order. */
export const FIELDS = {
  registry: ['kind'],
  needs: ['node', 'module', 'kind', 'name'],
  applied: ['node', 'module'],
  collect: ['node', 'collection', 'contributor']
} as const satisfies Record<What, readonly string[]>

export type Fields<W extends What> = Record<(typeof FIELDS)[W][number], string>

/** How a field's value is written in its token; collection names are escaped, the rest are the token. */
const CODEC: Partial<Record<string, { encode: (v: string) => string, decode: typeof decodeCollection }>> = {
  collection: { encode: encodeCollection, decode: decodeCollection }
}

/** Whether a field's value is decoded from its token (and so may hold any character). */
export function isDecoded (field: string): boolean {
  return CODEC[field] !== undefined
}

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

export type ParsedKey =
  | { ok: true, values: string[] }
  | { ok: false, reason: string }

/** Reads a key into its fields, or says in words why it does not fit its bucket's shape. */
export function parseKey (what: What, key: string): ParsedKey {
  const names = FIELDS[what]
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
    const codec = CODEC[name]
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

/** The fields of a key known to fit its bucket's shape. */
export function fieldsOf (what: What, key: string): string[] {
  const parsed = parseKey(what, key)
  if (!parsed.ok) throw new Error(`${key} does not fit the shape of ${what} keys: ${parsed.reason}`)
  return parsed.values
}

/** The token a field's value is written as in a key (collections are escaped). */
export function tokenOf (field: string, value: string): string {
  return CODEC[field]?.encode(value) ?? value
}

/** The key for the given fields; used by writers of test data and the demo. */
export function keyOf<W extends What> (what: W, fields: Fields<W>): string {
  return FIELDS[what].map((f) => tokenOf(f, (fields as Record<string, string>)[f] as string)).join('.')
}
