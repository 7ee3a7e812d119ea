// One generation of a bucket's contents held in memory, with the indexes that let a narrowed
// question cost what it returns. Pure: fed the changes a KV watch delivers, by whoever follows the
// bucket (bucket-follower.ts), and read by the answers (provisioning.ts).

import { fieldsOf, parseKey, type What } from './buckets.js'
import { holdValue, outOfShapeJson, StoredEntry } from './entry.js'
import { SortedKeys } from './sorted-keys.js'

/** One change as a KV watch delivers it: a nats.js `KvEntry` is one. */
export interface Change {
  key: string
  revision: number
  operation: 'PUT' | 'DEL' | 'PURGE'
  value: Uint8Array
  created: Date
}

export interface OutOfShapeEntry {
  key: string
  tokens: string[]
  revision: number
  reason: string
  json: string
  bytes: number
}

/** Index positions per bucket: single fields, and node with module (collection) or, for needs, with kind. */
const INDEXES: Record<What, number[][]> = {
  registry: [[0]],
  needs: [[0], [1], [2], [0, 1], [0, 2]],
  applied: [[0], [1]],
  collect: [[0], [1], [2], [0, 1]]
}

const SEP = '\u0000'

/** An entry's value in one index: the field itself, or the fields joined (no array per entry for one). */
function indexValue (fields: readonly string[], positions: readonly number[]): string {
  return positions.length === 1 ? fields[positions[0] as number] as string : positions.map((p) => fields[p]).join(SEP)
}

/** One generation of a bucket's contents (a re-created bucket starts a new one). */
export class Contents {
  readonly entries = new Map<string, StoredEntry>()
  readonly outOfShape = new Map<string, OutOfShapeEntry>()
  revision = 0
  /** Set when the snapshot is complete; until then only the maps are kept. */
  all: SortedKeys | undefined
  oddKeys = new SortedKeys()
  /** Keyed by the positions arrays of INDEXES themselves. */
  private readonly indexes = new Map<readonly number[], Map<string, SortedKeys>>()

  constructor (readonly what: What, readonly created: string) {}

  get indexed (): boolean {
    return this.all !== undefined
  }

  /** Applies one change; a revision not after the last one applied is ignored (a resumed watch may repeat it). */
  apply (e: Change): void {
    const revision = e.revision
    if (revision <= this.revision) return
    this.revision = revision
    const key = e.key
    const put = e.operation === 'PUT'
    // A key's shape, fields and places in the indexes follow from the key alone: a key seen before
    // keeps them, and only a new or a removed key touches the indexes.
    const old = this.entries.get(key)
    if (old !== undefined) {
      if (put) this.entries.set(key, new StoredEntry(this.what, key, revision, holdValue(e.value), e.created.getTime()))
      else this.removeEntry(old)
      return
    }
    const odd = this.outOfShape.get(key)
    if (odd !== undefined) {
      if (put) this.putOutOfShape(key, revision, odd.reason)
      else if (this.outOfShape.delete(key) && this.indexed) this.oddKeys.delete(key)
      return
    }
    if (!put) return
    const parsed = parseKey(this.what, key)
    if (!parsed.ok) {
      this.putOutOfShape(key, revision, parsed.reason)
      if (this.indexed) this.oddKeys.add(key)
      return
    }
    const entry = new StoredEntry(this.what, key, revision, holdValue(e.value), e.created.getTime())
    this.entries.set(key, entry)
    if (this.indexed) this.index(entry, (set) => set.add(key))
  }

  private putOutOfShape (key: string, revision: number, reason: string): void {
    const json = outOfShapeJson(key, revision, reason)
    this.outOfShape.set(key, { key, tokens: key.split('.'), revision, reason, json, bytes: Buffer.byteLength(json) })
  }

  private removeEntry (entry: StoredEntry): void {
    this.entries.delete(entry.key)
    if (this.indexed) this.index(entry, (set) => set.delete(entry.key))
  }

  private index (entry: StoredEntry, change: (set: SortedKeys) => void): void {
    change(this.all as SortedKeys)
    const fields = entry.fields
    for (const positions of INDEXES[this.what]) {
      const byValue = this.indexes.get(positions) as Map<string, SortedKeys>
      const value = indexValue(fields, positions)
      let set = byValue.get(value)
      if (!set) byValue.set(value, (set = new SortedKeys()))
      change(set)
      if (set.size === 0) byValue.delete(value)
    }
  }

  /** Builds the sorted indexes once the snapshot is in: one sort, then every index fills in order. */
  buildIndexes (): void {
    const sorted = [...this.entries.keys()].sort()
    // Each key read once for all indexes: at 300k keys the load's last step is on the clock.
    const fields = sorted.map((key) => fieldsOf(this.what, key))
    for (const positions of INDEXES[this.what]) {
      const lists = new Map<string, string[]>()
      for (let i = 0; i < sorted.length; i++) {
        const key = sorted[i] as string
        const value = indexValue(fields[i] as string[], positions)
        const list = lists.get(value)
        if (list) list.push(key)
        else lists.set(value, [key])
      }
      this.indexes.set(positions, new Map([...lists].map(([v, keys]) => [v, new SortedKeys(keys)])))
    }
    this.oddKeys = new SortedKeys([...this.outOfShape.keys()].sort())
    this.all = new SortedKeys(sorted)
  }

  /**
   * The narrowest sorted set holding every entry that matches `filter` (decoded values by field
   * position), and whether every key in it matches (then no entry need be checked).
   */
  candidates (filter: ReadonlyMap<number, string>): { set: SortedKeys, exact: boolean } {
    let best: { set: SortedKeys, exact: boolean } = { set: this.all as SortedKeys, exact: filter.size === 0 }
    for (const positions of INDEXES[this.what]) {
      if (!positions.every((p) => filter.has(p))) continue
      const set = this.indexes.get(positions)?.get(positions.map((p) => filter.get(p)).join(SEP)) ?? new SortedKeys()
      const exact = positions.length === filter.size
      if (set.size < best.set.size || (set.size === best.set.size && exact)) best = { set, exact }
    }
    return best
  }
}
