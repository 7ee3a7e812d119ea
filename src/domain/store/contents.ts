// One generation of a bucket's contents held in memory, with the indexes that let a narrowed
// question cost what it returns. Pure: fed the changes a KV watch delivers, by whoever follows the
// bucket (bucket-follower.ts), and read by the answers (provisioning.ts).

import { FIELDS, fieldsOf, isDecoded, parseKey, shapeProblem, tokenOf, type What } from '../wire/key-shapes.js'
import { ChangeLog } from './change-log.js'
import { generationOf } from '../wire/cursor.js'
import { Entries, outOfShapeJson, type EntriesRead } from './entry.js'
import { indexValue, PrefixRuns, SEP, SetRuns } from './index-runs.js'
import { KeyRange, KeyUnion, SortedKeys, SortedSlots, type KeySet } from './sorted-keys.js'
import { Tally, type TallyRead } from './tally.js'

/** One change as a KV watch delivers it: a nats.js `KvEntry` is one. */
export interface KvChange {
  key: string
  revision: number
  operation: 'PUT' | 'DEL' | 'PURGE'
  value: Uint8Array
  created: Date
  /** The ns within `created`'s ms, where the feed knows them (a nats.js KvEntry does not: 0). */
  nanos?: number
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

const NONE: readonly number[] = []

/**
 * An index over several fields is read for several values only while the values' combinations
 * (one set each) are at most this many; beyond, a narrower index or the checked scan answers.
 */
const MAX_PARTS = 100

/** A filter as the store reads it: the values each narrowed field position keeps (distinct; one or more). */
export type FieldValues = ReadonlyMap<number, readonly string[]>

/** The index values of `positions` that `filter` keeps: one per combination of its values; undefined beyond MAX_PARTS. */
function indexValues (positions: readonly number[], filter: FieldValues): readonly string[] | undefined {
  let values = filter.get(positions[0] as number) as readonly string[]
  for (let i = 1; i < positions.length; i++) {
    const more = filter.get(positions[i] as number) as readonly string[]
    if (values.length * more.length > MAX_PARTS) return undefined
    values = values.flatMap((v) => more.map((m) => `${v}${SEP}${m}`))
  }
  return values
}

/**
 * Whether an index's fields lead the key (node; node and module) and are written as they are: its
 * keys are then one range of all keys in code-unit order (those that start `node.module.`), so it
 * keeps no set of its own, only each value's revision.
 */
function isPrefix (what: What, positions: readonly number[]): boolean {
  return positions.length < FIELDS[what].length && positions.every((p, i) => p === i && !isDecoded(FIELDS[what][p] as string))
}

/** One generation of a bucket's contents (a re-created bucket starts a new one). */
export class Contents {
  /** The entries, for reading: every change goes through `apply`. */
  readonly entries: EntriesRead
  private readonly held: Entries
  private readonly outOfShapeHeld = new Map<string, OutOfShapeEntry>()
  /** Keys deleted or purged, with the revision of their deletion: kept for the generation, as their markers are in the bucket. */
  private readonly deleted = new Map<string, number>()
  /** Every change in revision order: what `since` reads (through `changesSince`). A key the entries number is named by its slot, any other by `-1 - i`, i its place in `others`. */
  private readonly log = new ChangeLog()
  /** The keys of this generation's changes that the entries do not number (out of shape, or deleted and never held): as few as those. */
  private readonly others: string[] = []
  private readonly otherNumbers = new Map<string, number>()
  private latest = 0
  /**
   * Cursors before this revision are refused: these contents were read again after a server
   * defect lost changes (follow/server-defects.ts), and a cursor of the contents before them may
   * lack what was found. Every answer's revision is at least this one, so that its cursor is served.
   */
  private expired = 0
  /** Why cursors before `expired` are refused, as the refusal says it (what this instance found). */
  private expiredWhy = ''
  /**
   * The last revision that put or deleted an out-of-shape key, per field position: by the key's
   * token there, and (`none`) of keys with no token there, which every filter on that field keeps.
   * A filter reads the least of its fields' (conservative: every key it keeps is under each), so
   * another node's out-of-shape write leaves its revision alone. Bounded by the tokens of this
   * generation's out-of-shape keys, as the sets of the indexes are by their values.
   */
  private readonly outOfShapeAt: Array<{ byToken: Map<string, number>, none: number }>
  private outOfShapeSeen = false
  /** The generation as cursors name it (SPEC §8). */
  readonly generation: string
  /** Set when the snapshot is complete; until then only the maps are kept. */
  private allKeys: SortedSlots | undefined
  /** The out-of-shape keys in key order, once the snapshot is complete. */
  private outOfShapeOrder = new SortedKeys()
  /** Keyed by the positions arrays of INDEXES themselves. */
  private readonly indexes = new Map<readonly number[], Map<string, SortedSlots>>()
  /** The revision of each value of a prefix index (`isPrefix`), keyed as `indexes`: its keys are a range of `all`. */
  private readonly prefixes = new Map<readonly number[], Map<string, number>>()
  /**
   * The range of `all` each prefix asked for spans, kept until `all` changes its members: every
   * answer and ETag reads its filter's revision, and two binary searches through the key table cost
   * several times a set's lookup. Only prefixes some key of this generation had are kept, so it
   * holds at most an entry per value of `prefixes` (a question naming a node no key has costs a
   * lookup and keeps nothing: distinct filters asked no longer grow it).
   */
  private readonly ranges = new Map<string, [lo: number, hi: number]>()
  /** What a value no key of this generation ever had narrows to: nothing, at revision 0 (never changed). */
  private readonly none: KeySet

  /** Per node and module (SPEC §10), for reading; the registry has none. */
  readonly tally: TallyRead | undefined
  private readonly counts: Tally | undefined

  /** Contents with room for about `keys` keys: a load of a bucket holding that many messages grows nothing on the way. */
  static sized (what: What, created: string, keys: number): Contents {
    const c = new Contents(what, created)
    c.held.keys.reserve(keys)
    return c
  }

  constructor (readonly what: What, readonly created: string) {
    this.entries = this.held = new Entries(what)
    this.outOfShapeAt = FIELDS[what].map(() => ({ byToken: new Map(), none: 0 }))
    this.none = new SortedSlots(this.entries.keys)
    this.generation = generationOf(created)
    this.tally = this.counts = what === 'registry' ? undefined : new Tally(what !== 'collect', (tokens) => this.recount(tokens))
  }

  /** The entries under a key's leading `tokens` counted again, for the tally: a range of the sorted keys. */
  private recount (tokens: readonly string[]): { count: number, ms: number, nanos: number, revision: number } {
    const out = { count: 0, ms: 0, nanos: 0, revision: 0 }
    const all = this.allKeys
    const prefix = tokens.join('.')
    const whole = tokens.length === FIELDS[this.what].length
    if (all === undefined) return out
    const [lo, hi] = whole ? [all.lowerBound(prefix), all.upperBound(prefix)] : [all.lowerBound(`${prefix}.`), all.lowerBound(`${prefix}/`)]
    for (let i = lo; i < hi; i++) {
      const slot = all.slotAt(i)
      const ms = this.entries.updatedAt(slot)
      const nanos = this.entries.nanosAt(slot)
      out.count++
      if (ms > out.ms || (ms === out.ms && nanos >= out.nanos)) Object.assign(out, { ms, nanos, revision: this.entries.revisionAt(slot) })
    }
    return out
  }

  /**
   * The revision of the last change applied, or the one before which cursors are refused when that
   * is later: a read again can end before a revision the contents it replaced had reached (the
   * changes after it were removed), and an answer's cursor must be one these contents serve.
   */
  get revision (): number {
    return Math.max(this.latest, this.expired)
  }

  /** The out-of-shape keys held, by key. */
  get outOfShape (): ReadonlyMap<string, OutOfShapeEntry> {
    return this.outOfShapeHeld
  }

  /** Keys deleted or purged, with the revision of their deletion: kept for the generation, as their markers are in the bucket. */
  get deletions (): ReadonlyMap<string, number> {
    return this.deleted
  }

  /**
   * Cursors before this revision are refused (see `expired`); every answer's revision is at least
   * this one, so that its cursor is served.
   */
  get expiredBefore (): number {
    return this.expired
  }

  /** What the refusal of a cursor before `expiredBefore` says this instance found (see `expireBefore`). */
  get expiredBecause (): string {
    return this.expiredWhy
  }

  /**
   * Refuses the cursors before `revision` too, saying `why` (what this instance found, completing
   * "this instance …"): these contents were read again and found what a cursor of the contents
   * before them may lack.
   */
  expireBefore (revision: number, why: string): void {
    if (revision <= this.expired) return
    this.expired = revision
    this.expiredWhy = why
  }

  /** The out-of-shape keys held, in key order (once indexed). */
  * outOfShapeInOrder (): Generator<OutOfShapeEntry> {
    const keys = this.outOfShapeOrder
    for (let i = 0; i < keys.size; i++) {
      const o = this.outOfShapeHeld.get(keys.at(i) as string)
      if (o !== undefined) yield o
    }
  }

  get indexed (): boolean {
    return this.allKeys !== undefined
  }

  /** The keys changed after `revision`, oldest change first, each once, at its latest change. */
  * changesSince (revision: number): Generator<[key: string, revision: number]> {
    for (const [n, rev] of this.log.since(revision, this.currentOf)) yield [this.keyOf(n), rev]
  }

  private keyOf (n: number): string {
    return n >= 0 ? this.entries.keys.keyAt(n) : this.others[-1 - n] as string
  }

  /** The number the log names a key the entries do not number by. */
  private otherNumber (key: string): number {
    let n = this.otherNumbers.get(key)
    if (n === undefined) this.otherNumbers.set(key, (n = -this.others.push(key)))
    return n
  }

  /**
   * The revision of the latest change, put or deletion, of the key the log names `n`: a slot the
   * entries hold is read from its column; a slot they do not hold is an in-shape key deleted. A key
   * of `others` put in shape later has its later records under its slot: undefined skips the earlier.
   */
  private readonly currentOf = (n: number): number | undefined => {
    if (n >= 0) return this.entries.holds(n) ? this.entries.revisionAt(n) : this.deleted.get(this.entries.keys.keyAt(n))
    const key = this.others[-1 - n] as string
    return this.outOfShapeHeld.get(key)?.revision ?? this.deleted.get(key)
  }

  /** Applies one change; a revision not after the last one applied is ignored (a resumed watch may repeat it). */
  apply (e: KvChange): void {
    const revision = e.revision
    if (revision <= this.latest) return
    this.latest = revision
    const key = e.key
    const put = e.operation === 'PUT'
    const n = this.change(key, revision, put, e)
    if (put) this.deleted.delete(key)
    else this.deleted.set(key, revision)
    this.log.record(n, revision)
    this.log.compact(this.entries.size + this.outOfShapeHeld.size + this.deleted.size, this.currentOf)
  }

  /** Applies a change to what is held and the indexes; gives the number the log names its key by. */
  private change (key: string, revision: number, put: boolean, e: KvChange): number {
    // A key's shape, fields and places in the indexes follow from the key alone: a key seen before
    // keeps them, and only a new or a removed key changes the indexes' members.
    const slot = this.entries.slotOf(key)
    if (slot !== undefined && this.entries.holds(slot)) {
      const old = { ms: this.entries.updatedAt(slot), nanos: this.entries.nanosAt(slot) }
      if (put) {
        this.held.update(slot, revision, e.value, e.created.getTime(), e.nanos)
        this.counts?.rewrite(key, old, e.created.getTime(), e.nanos ?? 0, revision)
      } else {
        this.held.delete(slot)
        this.counts?.remove(key, old)
      }
      if (this.indexed) this.index(fieldsOf(this.what, key), revision, put ? undefined : (set) => set.delete(key))
      return slot
    }
    const held = this.outOfShapeHeld.get(key)
    if (held !== undefined || !put) {
      // An out-of-shape key, or the deletion of a key this generation does not hold: no index holds it.
      this.changeOutOfShape(key, revision, put, held?.reason)
      return slot ?? this.otherNumber(key)
    }
    // Indexed, the key is read once for its shape and its index values; while a load reads the
    // bucket no index is built yet, so its shape is only checked.
    const parsed = this.indexed ? parseKey(this.what, key) : undefined
    const problem = parsed === undefined ? shapeProblem(this.what, key) : parsed.ok ? undefined : parsed.reason
    if (problem !== undefined) {
      this.changeOutOfShape(key, revision, put, problem)
      return this.otherNumber(key)
    }
    const added = this.held.add(key, slot, revision, e.value, e.created.getTime(), e.nanos)
    this.counts?.add(key, e.created.getTime(), e.nanos ?? 0, revision)
    if (parsed?.ok === true) this.index(parsed.values, revision, (set) => set.add(key, added))
    return added
  }

  private changeOutOfShape (key: string, revision: number, put: boolean, reason: string | undefined): void {
    if (put) {
      const json = outOfShapeJson(key, revision, reason as string)
      if (!this.outOfShapeHeld.has(key)) {
        if (this.indexed) this.outOfShapeOrder.add(key)
        this.counts?.outOfShape(key, 1)
      }
      const tokens = key.split('.')
      this.outOfShapeHeld.set(key, { key, tokens, revision, reason: reason as string, json, bytes: Buffer.byteLength(json) })
      this.markOutOfShape(tokens, revision)
      return
    }
    const held = this.outOfShapeHeld.get(key)
    if (held !== undefined) {
      this.outOfShapeHeld.delete(key)
      if (this.indexed) this.outOfShapeOrder.delete(key)
      this.counts?.outOfShape(key, -1)
      this.markOutOfShape(held.tokens, revision)
      return
    }
    // The deletion of a key never held: its fields, when it has them, say which answers it touches.
    const parsed = parseKey(this.what, key)
    if (!parsed.ok) this.markOutOfShape(key.split('.'), revision)
    else if (this.indexed) this.index(parsed.values, revision)
  }

  /** Marks an out-of-shape key's change under each of its tokens (see outOfShapeAt). */
  private markOutOfShape (tokens: readonly string[], revision: number): void {
    this.outOfShapeSeen = true
    this.outOfShapeAt.forEach((at, p) => {
      const token = tokens[p]
      if (token === undefined) at.none = revision
      else at.byToken.set(token, revision)
    })
  }

  /** The last revision of an out-of-shape key a filter on `filter`'s fields may keep (see outOfShapeAt). */
  private outOfShapeRevisionFor (filter: FieldValues): number {
    if (!this.outOfShapeSeen) return 0
    let revision = Infinity
    for (const [p, values] of filter) {
      const at = this.outOfShapeAt[p]
      if (at === undefined) continue
      let kept = at.none
      for (const value of values) kept = Math.max(kept, at.byToken.get(tokenOf(FIELDS[this.what][p] as string, value)) ?? 0)
      revision = Math.min(revision, kept)
    }
    return revision === Infinity ? 0 : revision
  }

  /** Marks the change of a key with `fields` in every set that holds it, and changes the sets' members. */
  private index (fields: readonly string[], revision: number, change?: (set: SortedSlots) => void): void {
    const all = this.allKeys as SortedSlots
    if (change) {
      change(all)
      this.ranges.clear()
    }
    all.revision = Math.max(all.revision, revision)
    for (const positions of INDEXES[this.what]) {
      const value = indexValue(fields, positions)
      const revisions = this.prefixes.get(positions)
      if (revisions !== undefined) {
        // An emptied range keeps its revision, as an emptied set does.
        revisions.set(value, Math.max(revisions.get(value) ?? 0, revision))
        continue
      }
      const byValue = this.indexes.get(positions) as Map<string, SortedSlots>
      let set = byValue.get(value)
      // An emptied set stays: its revision is what an answer narrowed to it reflects.
      if (!set) byValue.set(value, (set = new SortedSlots(this.entries.keys)))
      if (change) change(set)
      set.revision = Math.max(set.revision, revision)
    }
  }

  /**
   * The last revision that changed what an answer narrowed by `filter` holds, conservatively: that
   * of the narrowest set holding every match, and of the out-of-shape keys the filter may keep.
   */
  revisionFor (filter: FieldValues): number {
    if (filter.size === 0) return this.revision
    return Math.max(this.candidates(filter).set.revision, this.outOfShapeRevisionFor(filter), this.expired)
  }

  /** Builds the sorted indexes once the snapshot is in: one sort, then every index fills in order. */
  buildIndexes (): void {
    const { keys: sorted, slots } = this.entries.keys.sorted((slot) => this.entries.holds(slot))
    const keys = this.entries.keys
    const filling = INDEXES[this.what].map((positions) => ({ positions, runs: isPrefix(this.what, positions) ? new PrefixRuns(positions) : new SetRuns(positions) }))
    // Each key read once for every index: at 300k keys the load's last step is on the clock.
    for (let i = 0; i < sorted.length; i++) {
      const fields = fieldsOf(this.what, sorted[i] as string)
      const slot = slots[i] as number
      const revision = this.entries.revisionAt(slot)
      for (const { runs } of filling) runs.add(fields, slot, revision)
    }
    for (const { positions, runs } of filling) {
      if (runs instanceof PrefixRuns) this.prefixes.set(positions, runs.done())
      else this.indexes.set(positions, runs.done(keys))
    }
    this.outOfShapeOrder = new SortedKeys([...this.outOfShapeHeld.keys()].sort())
    this.allKeys = new SortedSlots(keys, slots)
    this.allKeys.revision = this.latest
    for (const [key, revision] of this.deleted) {
      const parsed = parseKey(this.what, key)
      // A deletion seen during the load marks the sets its key would be in.
      if (parsed.ok) this.index(parsed.values, revision)
    }
  }

  /**
   * The narrowest sorted set holding every entry that matches `filter` (decoded values by field
   * position), and whether every key in it matches (then no entry need be checked). For several
   * values, an index's sets of each are one set: their union in key order, moved by any of them.
   */
  candidates (filter: FieldValues): { set: KeySet, exact: boolean, positions: readonly number[] } {
    let best: { set: KeySet, exact: boolean, positions: readonly number[] } = { set: this.allKeys as KeySet, exact: filter.size === 0, positions: NONE }
    for (const positions of INDEXES[this.what]) {
      if (!positions.every((p) => filter.has(p))) continue
      const values = indexValues(positions, filter)
      if (values === undefined) continue
      const set = values.length === 1 ? this.setOf(positions, values[0] as string) : this.union(positions, values)
      const exact = positions.length === filter.size
      if (set.size < best.set.size || (set.size === best.set.size && exact)) best = { set, exact, positions }
    }
    return best
  }

  /** The set of one index value. */
  private setOf (positions: readonly number[], value: string): KeySet {
    const revisions = this.prefixes.get(positions)
    const revision = revisions?.get(value)
    return revisions !== undefined
      ? revision === undefined ? this.none : this.range(value, revision)
      : this.indexes.get(positions)?.get(value) ?? this.none
  }

  /** The sets of several values of one index, as one: they are disjoint, since a key has one value a field. */
  private union (positions: readonly number[], values: readonly string[]): KeySet {
    const sets = values.map((v) => this.setOf(positions, v))
    // An emptied set keeps its revision, which the union's answer reflects too.
    const revision = sets.reduce((r, set) => Math.max(r, set.revision), 0)
    return new KeyUnion(this.entries.keys, sets.filter((set) => set.size > 0), revision)
  }

  /**
   * Each value of the field at `position` that an entry holds, with how many hold it and the last
   * revision that put or deleted a key holding it: read from the field's index (facets, SPEC §10).
   */
  valuesAt (position: number): Map<string, { count: number, revision: number }> {
    const positions = INDEXES[this.what].find((p) => p.length === 1 && p[0] === position)
    if (positions === undefined) throw new Error(`${this.what} keeps no index of field ${position}`)
    const out = new Map<string, { count: number, revision: number }>()
    const revisions = this.prefixes.get(positions)
    if (revisions !== undefined) {
      for (const [value, revision] of revisions) {
        const count = this.range(value, revision).size
        if (count > 0) out.set(value, { count, revision })
      }
      return out
    }
    for (const [value, set] of this.indexes.get(positions) ?? []) if (set.size > 0) out.set(value, { count: set.size, revision: set.revision })
    return out
  }

  /**
   * The field positions of `filter` whose changes may move `revisionFor(filter)`: those of the set
   * it reads (its revision moves with any key of that set's value), and the out-of-shape keys a
   * filter on them keeps are a superset of those `filter` keeps.
   */
  governing (filter: FieldValues): readonly number[] {
    return filter.size === 0 ? NONE : this.candidates(filter).positions
  }

  /** The keys of `all` whose leading tokens are `value` (an index value: tokens joined by SEP), and the revision of that prefix index's set. */
  private range (value: string, revision: number): KeySet {
    const all = this.allKeys as SortedSlots
    let found = this.ranges.get(value)
    if (found === undefined) {
      // Keys that start `a.b.` are those from `a.b.` on and before `a.b/` ('/' follows '.'). A
      // value with a dot would read as more than one token; no in-shape key has it.
      const prefix = value.split(SEP).join('.')
      found = value.includes('.') ? [0, 0] : [all.lowerBound(`${prefix}.`), all.lowerBound(`${prefix}/`)]
      this.ranges.set(value, found)
    }
    return new KeyRange(all, found[0], found[1], revision)
  }
}
