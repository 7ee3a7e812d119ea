// What a filter keeps of one bucket's contents, and the two walks over it that every answer reads:
// in key order (the list, the snapshot, the count, the facets) and in revision order (`since`, the
// event streams' changes, the held requests' wake-ups).

import { FIELDS, parseKey, type What } from '../wire/key-shapes.js'
import { deletedJson } from './documents.js'
import type { Filter } from '../wire/request.js'
import type { StoredEntry } from '../store/entry.js'
import { fieldsMatcher, tokensMatcher, type Contents, type FieldValues, type OutOfShapeEntry } from '../store/contents.js'
import type { KeySet } from '../store/sorted-keys.js'

/** One change after a cursor, as the event stream sends it. */
export interface Change {
  type: 'put' | 'delete' | 'outOfShape'
  /** The entry, the deletion or the out-of-shape key, as in answers. */
  json: string
  revision: number
}

/** A change the filter keeps, with the entry it put (whose size a cut reads). */
export type KeptChange = Change & { entry?: StoredEntry }

/** What a filter keeps, by field position (decoded values) and by key token for out-of-shape keys. */
export interface Narrowing {
  positions: FieldValues
  matches: (fields: readonly string[]) => boolean
  keepsTokens: (tokens: readonly string[]) => boolean
}

/**
 * A key as a filter reads it: its field values when it is in shape, else its tokens. Held or
 * deleted, a key reads the same: the held entries are the in-shape keys.
 */
export type KeyRead = { values: readonly string[] } | { tokens: readonly string[] }

/** `key` read once for every filter that looks at it (`tokens`: its split, when the caller has it). */
export function readKey (what: What, key: string, tokens?: readonly string[]): KeyRead {
  const parsed = parseKey(what, key)
  return parsed.ok ? { values: parsed.values } : { tokens: tokens ?? key.split('.') }
}

/** Whether `n` keeps the key read as `key`. */
export const keepsKey = (n: Narrowing, key: KeyRead): boolean => 'values' in key ? n.matches(key.values) : n.keepsTokens(key.tokens)

export function narrowing (what: What, filter: Filter): Narrowing {
  const positions = new Map<number, readonly string[]>()
  FIELDS[what].forEach((f, i) => {
    const values = filter[f]
    if (values !== undefined) positions.set(i, values)
  })
  return { positions, matches: fieldsMatcher(positions), keepsTokens: tokensMatcher(what, positions) }
}

/**
 * The entries a filter keeps of one generation, read from the narrowest set holding them all: when
 * every key of that set matches (`exact`), nothing is checked and a count is the set's size.
 */
export class Selection {
  /** The narrowest set holding every kept entry, read at the first walk in key order. */
  private candidates: { set: KeySet, exact: boolean } | undefined

  constructor (readonly contents: Contents, readonly n: Narrowing) {}

  private get read (): { set: KeySet, exact: boolean } {
    return (this.candidates ??= this.contents.candidates(this.n.positions))
  }

  /** Whether every key of the set read is kept: then a walk stops as soon as its visitor does, and a count is the set's size. */
  get exact (): boolean {
    return this.read.exact
  }

  /** How many entries the filter keeps. */
  count (): number {
    const { set, exact } = this.read
    if (exact) return set.size
    return this.walk(undefined, () => true).after
  }

  /**
   * Visits the kept entries after `after` in key order until `visit` returns false; gives how many
   * kept entries precede them, and (`after`) how many of those after were visited. The entry is
   * read from the contents' columns when visited, its key only when asked.
   */
  walk (after: string | undefined, visit: (e: StoredEntry) => boolean): { before: number, after: number } {
    const { set, exact } = this.read
    const { n } = this
    const entries = this.contents.entries
    const start = exact && after !== undefined ? set.upperBound(after) : 0
    let before = start
    let visited = 0
    for (let i = start; i < set.size; i++) {
      const slot = set.slotAt(i)
      const e = entries.at(slot)
      if (!exact && !n.matches(e.fields)) continue
      if (after !== undefined && entries.keys.compareAt(slot, after) <= 0) {
        before++
        continue
      }
      visited++
      if (!visit(e)) break
    }
    return { before, after: visited }
  }

  /** The out-of-shape keys the filter keeps, sorted by key. */
  * outOfShape (): Generator<OutOfShapeEntry> {
    for (const o of this.contents.outOfShapeInOrder()) if (this.n.keepsTokens(o.tokens)) yield o
  }

  /** The change of `key` (latest, at `revision`) if the filter keeps it: a put of an entry, a deletion, or an out-of-shape key put. */
  changeOf (key: string, revision: number): KeptChange | undefined {
    const kept = this.kept(key)
    if (kept === undefined) return undefined
    if (kept.entry !== undefined) return { type: 'put', json: kept.entry.json, revision, entry: kept.entry }
    if (kept.outOfShape !== undefined) return { type: 'outOfShape', json: kept.outOfShape.json, revision }
    return { type: 'delete', json: deletedJson(this.contents.what, key, revision), revision }
  }

  /** What the contents hold of `key` if the filter keeps it: its entry, its out-of-shape key, or (neither) its deletion. */
  private kept (key: string): { entry?: StoredEntry, outOfShape?: OutOfShapeEntry } | undefined {
    const { contents, n } = this
    const entry = contents.entries.get(key)
    if (entry !== undefined) return n.matches(entry.fields) ? { entry } : undefined
    const outOfShape = contents.outOfShape.get(key)
    if (outOfShape !== undefined) return n.keepsTokens(outOfShape.tokens) ? { outOfShape } : undefined
    const parsed = parseKey(contents.what, key)
    return (parsed.ok ? n.matches(parsed.values) : n.keepsTokens(key.split('.'))) ? {} : undefined
  }

  /** The changes after `since` the filter keeps, latest per key, oldest first. */
  * changesAfter (since: number): Generator<KeptChange> {
    // Only the keys the filter's own index may hold, and none after its own last revision: this
    // runs at every look of every stream (Contents.changesSinceOf).
    for (const [key, revision] of this.contents.changesSinceOf(this.n.positions, since)) {
      const change = this.changeOf(key, revision)
      if (change !== undefined) yield change
    }
  }
}
