// One description per bucket, and of each field its keys name: everything else about a bucket's
// keys is made from these two tables (docs/buckets.md). The key shapes and their reading
// (key-shapes.ts), the request's filters and `by`, the answers' entry schemas (schemas.ts), the
// refusals' words (request.ts), the indexes (store/contents.ts) and the entry encoder
// (store/entry.ts). Adding a field is a line in FIELD_DESCRIPTIONS and its name in a bucket's
// `key`, then `npm run openapi`.

import { decodeCollection, encodeCollection } from './collection-name.js'

/** What one field of a key is, wherever it is named. */
export interface FieldDescription {
  /** What an entry's property of this name holds. */
  readonly entry: string
  /** What a filter on it keeps, as its request field and query parameter say it. */
  readonly filter: string
  /** A value, for the documents' examples and the refusals' words. */
  readonly example: string
  /**
   * How its value is written as a key token, when it is not the token itself: such a field is
   * decoded when a key is read, may hold any character, and is encoded when a filter names it.
   */
  readonly codec?: { readonly encode: (value: string) => string, readonly decode: typeof decodeCollection }
}

/** Every field a bucket's key names, in the order the request's filters list them. */
export const FIELD_DESCRIPTIONS = {
  node: { entry: 'The node.', filter: 'Only this node (one key token).', example: 'n1' },
  module: { entry: 'The module.', filter: 'Only this module; for collect, the contributor.', example: 'gitea' },
  contributor: { entry: 'The module that contributed the item.', filter: 'For collect: only this contributor (the same as `module`).', example: 'gitea' },
  kind: { entry: 'The kind of placeholder.', filter: 'Only this kind of placeholder (registry: the kind answered; needs: the kind needed).', example: 'secret' },
  name: { entry: 'The name of the need.', filter: 'For needs: only needs of this name.', example: 'forge-account' },
  collection: {
    entry: 'The collection, by its decoded name.',
    filter: 'For collect: only this collection, by its decoded name; the service encodes it.',
    example: 'shell:zsh:normal',
    codec: { encode: encodeCollection, decode: decodeCollection }
  }
} as const satisfies Record<string, FieldDescription>

export type FieldName = keyof typeof FIELD_DESCRIPTIONS
export const FIELD_NAMES = Object.keys(FIELD_DESCRIPTIONS) as FieldName[]

/** One bucket: its name, its key's fields in token order, and what is asked of them. */
export interface BucketDescription {
  readonly bucket: string
  /** The key's fields, in token order: each is also a filter. */
  readonly key: readonly FieldName[]
  /** The fields whose distinct values `by` counts (facets). */
  readonly facets: readonly FieldName[]
  /** The fields indexed together, so that a request narrowed by them costs what it returns. */
  readonly indexes: readonly (readonly FieldName[])[]
  /** Another name a filter and `by` take for a key field. */
  readonly aliases?: Readonly<Partial<Record<FieldName, FieldName>>>
}

/**
 * The four buckets. Indexed: each field alone, and node with the field after it (a module's
 * needs, a collection on a node); a filter no index matches exactly (applied's node with module is
 * the whole key) reads the narrowest one and checks its keys.
 */
export const BUCKET_DESCRIPTIONS = {
  registry: {
    bucket: 'mesh-provisioner_registry',
    key: ['kind'],
    facets: ['kind'],
    indexes: [['kind']]
  },
  needs: {
    bucket: 'mesh-provisioner_needs',
    key: ['node', 'module', 'kind', 'name'],
    facets: ['node', 'module', 'kind'],
    indexes: [['node'], ['module'], ['kind'], ['node', 'module'], ['node', 'kind']]
  },
  applied: {
    bucket: 'mesh-provisioner_applied',
    key: ['node', 'module'],
    facets: ['node', 'module'],
    indexes: [['node'], ['module']]
  },
  collect: {
    bucket: 'mesh-provisioner_collect',
    key: ['node', 'collection', 'contributor'],
    facets: ['node', 'collection', 'contributor'],
    indexes: [['node'], ['collection'], ['contributor'], ['node', 'collection'], ['node', 'contributor']],
    aliases: { module: 'contributor' }
  }
} as const satisfies Record<string, BucketDescription>

export type What = keyof typeof BUCKET_DESCRIPTIONS
export const WHATS = Object.keys(BUCKET_DESCRIPTIONS) as What[]

const described = (what: What): BucketDescription => BUCKET_DESCRIPTIONS[what]

/** The names a filter of `what` takes: its key fields and their aliases, in the order of FIELD_DESCRIPTIONS. */
export function filtersOf (what: What): FieldName[] {
  const { key, aliases = {} } = described(what)
  return FIELD_NAMES.filter((f) => key.includes(f) || aliases[f] !== undefined)
}

/** The key field a filter or `by` of `what` names (an alias's field, else the name itself). */
export function fieldNamed (what: What, name: string): string {
  return described(what).aliases?.[name as FieldName] ?? name
}

/** The names `by` takes for `what`: its facets, then their aliases. */
export function byNamesOf (what: What): FieldName[] {
  const { facets, aliases = {} } = described(what)
  return [...facets, ...FIELD_NAMES.filter((f) => aliases[f] !== undefined && facets.includes(aliases[f]))]
}

/** The aliases `by` takes for `what`, beside its facets' own names. */
export function byAliasesOf (what: What): FieldName[] {
  return byNamesOf(what).slice(described(what).facets.length)
}

/** Whether a field's value is decoded from its token (and so may hold any character). */
export function isDecoded (field: string): boolean {
  return (FIELD_DESCRIPTIONS as Record<string, FieldDescription>)[field]?.codec !== undefined
}

/**
 * Every name `by` takes, the widest bucket's first: the order the request schema has always listed
 * them in (node, module, kind, then collect's own).
 */
export const BY_NAMES = [...new Set([...WHATS].sort((a, b) => described(b).key.length - described(a).key.length).flatMap(byNamesOf))]

/** A table of one thing per bucket, made from its description. */
export function perBucket<T> (make: (what: What) => T): Record<What, T> {
  return Object.fromEntries(WHATS.map((w) => [w, make(w)])) as Record<What, T>
}
