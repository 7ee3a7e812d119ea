// One generation of a view's contents (what it holds of its bucket) in memory, with the indexes that let a narrowed
// request cost what it returns. Pure: fed the changes a KV watch delivers, by whoever follows the
// bucket (bucket-view.ts), and read by the answers (provisioning.ts).

import { FIELDS, fieldsOf, isDecoded, parseKey, shapeProblem, tokenOf, wellFormedBytes, type What } from '../wire/key-shapes.js'
import { BUCKET_DESCRIPTIONS, perBucket } from '../wire/buckets.js'
import { ChangeLog } from './change-log.js'
import { generationOf } from '../wire/cursor.js'
import { Entries, outOfShapeJson, type EntriesRead } from './entry.js'
import { indexValue, PrefixRuns, SEP, SetRuns } from './index-runs.js'
import { KeyRange, KeyUnion, SortedKeys, SortedSlots, type KeySet } from './sorted-keys.js'
import { Tally, type Instant, type TallyRead } from './tally.js'

/** One change as a KV watch delivers it: a nats.js `KvEntry` is one. */
export interface KvChange {
  key: string
  /**
   * The key as the bytes it arrived in, where the feed has them (kv-feed.ts): a load applies a new
   * key of its bucket's shape from them, and makes no string of it.
   */
  keyBytes?: Uint8Array
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

/**
 * Each bucket's indexes (its description's, wire/buckets.ts) as the token positions of their
 * fields. A filter no index matches exactly reads the narrowest one and checks its keys, its
 * revision included (`revisionFor`).
 */
const INDEXES = perBucket((what) => BUCKET_DESCRIPTIONS[what].indexes.map((fields) => fields.map((f) => (FIELDS[what] as readonly string[]).indexOf(f))))

/**
 * How many of a key's leading fields the index build reads: those of its indexes, which hold the
 * tally's too (node, module, kind). In key order, the keys that share those tokens come together
 * (a needs module's kind: ten keys in the bench's mesh), and the build splits the first alone.
 */
const READ_BY_BUILD = perBucket((what) => Math.max(...INDEXES[what].flat()) + 1)

/** A key's first `count` tokens and the dot after them (a key with more tokens than that). */
function leadingTokens (key: string, count: number): string {
  let end = -1
  for (let i = 0; i < count; i++) end = key.indexOf('.', end + 1)
  return key.slice(0, end + 1)
}

/** Whether an index is led by node with one other field: its values are listed per node (`nodeValues`). */
const byNode = (positions: readonly number[]): boolean => positions.length === 2 && positions[0] === 0

/** A field's one value, or a set of several. */
type Kept = string | ReadonlySet<string>
const keeps = (kept: Kept, value: string | undefined): boolean => typeof kept === 'string' ? value === kept : value !== undefined && kept.has(value)
const keptOf = (values: readonly string[]): Kept => values.length === 1 ? values[0] as string : new Set(values)

/** Whether a key's fields are kept by `filter`. */
export function fieldsMatcher (filter: FieldValues): (fields: readonly string[]) => boolean {
  const kept = [...filter].map(([p, values]) => [p, keptOf(values)] as const)
  return (fields) => {
    for (const [p, k] of kept) if (!keeps(k, fields[p])) return false
    return true
  }
}

/**
 * Whether an out-of-shape key with `tokens` is kept by `filter`: left out only when a token it does
 * have is none of the filter's. A key always has a first token, so a node filter (a scoped token's
 * too) keeps only the out-of-shape keys that start with one of its nodes.
 */
export function tokensMatcher (what: What, filter: FieldValues): (tokens: readonly string[]) => boolean {
  const kept = [...filter].map(([p, values]) => [p, keptOf(values.map((v) => tokenOf(FIELDS[what][p] as string, v)))] as const)
  return (tokens) => kept.every(([p, k]) => tokens[p] === undefined || keeps(k, tokens[p]))
}

/** How a change moves a key among the indexes' members: it joins them (a put of a key not held) or leaves them (a deletion). */
type Move = { key: string, put: true, slot: number } | { key: string, put: false }

/**
 * What `revisionFor` last read for one filter, kept by the one who asks it again: the revision, and
 * the coarser one (moved by every change the filter keeps, and by others) it was read under.
 */
export interface RevisionMemo { generation: string, coarse: number, revision: number }

/** How many entries hold a value, and the last revision that put or deleted a key holding it (facets). */
export interface Counted { count: number, revision: number }

const NONE: readonly number[] = []

/**
 * An index over several fields is read for several values only while the values' combinations
 * (one set each) are at most this many; beyond, a narrower index or the checked scan answers.
 */
const MAX_PARTS = 100

/**
 * What a key of an index's set costs to read against a record of the change log (a key string made,
 * then a sort): the changes after a cursor are read from the set only when it is this many times smaller.
 */
const SET_READ_COST = 4

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

/** What a view holds of its bucket, one generation of it (a re-created bucket starts a new one): the view's contents. */
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
  /** The object naming what these contents hold now (`state`), made when asked; dropped at each change or refusal. */
  private stateNow: object | undefined
  /**
   * The last revision that put or deleted an out-of-shape key, per field position: by the key's
   * token there, and (`none`) of keys with no token there, which every filter on that field keeps.
   * A filter reads the least of its fields' (conservative: every key it keeps is under each), so
   * another node's out-of-shape write leaves its revision alone. Bounded by the tokens of this
   * generation's out-of-shape keys, as the sets of the indexes are by their values.
   */
  private readonly outOfShapeAt: Array<{ byToken: Map<string, number>, none: number }>
  private outOfShapeSeen = false
  /** Out-of-shape keys deleted (their revisions are in `deleted`): as few as this generation's out-of-shape keys. */
  private readonly oddGone = new Set<string>()
  /**
   * The in-shape keys deleted, in key order: all of them (a prefix index reads its range), and per
   * value of each set index. A filter no index matches exactly reads the deletions it keeps here,
   * so that its revision follows them and nothing else. They hold `deleted`'s own key strings:
   * 8 bytes a deleted key an index, nothing for a bucket that deletes nothing.
   */
  private goneAll = new SortedKeys()
  private readonly gone = new Map<readonly number[], Map<string, SortedKeys>>()
  /** Per index led by node (`byNode`): each node's index values, so that facets narrowed to nodes read those alone. */
  private readonly nodeValues = new Map<readonly number[], Map<string, string[]>>()
  /** The generation as cursors name it (docs/following-changes.md). */
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
   * holds at most an entry per value of `prefixes` (a request naming a node no key has costs a
   * lookup and keeps nothing: distinct filters asked no longer grow it).
   */
  private readonly ranges = new Map<string, [lo: number, hi: number]>()
  /** What a value no key of this generation ever had narrows to: nothing, at revision 0 (never changed). */
  private readonly none: KeySet

  /** Per node and module (docs/glance.md), for reading; the registry has none. */
  readonly tally: TallyRead | undefined
  private readonly counts: Tally | undefined

  /**
   * The tally once the snapshot is in: a load counts nothing as it goes, and the index build counts
   * what it holds then, in key order (Tally.addInOrder).
   */
  private get counting (): Tally | undefined {
    return this.indexed ? this.counts : undefined
  }

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
    this.tally = this.counts = what === 'registry' ? undefined : new Tally(what !== 'collect', (tokens) => this.recount(tokens), what === 'needs' ? (tokens, at) => this.waitingAfter(tokens, at) : undefined)
  }

  /** The entries under a key's leading `tokens` counted again, for the tally: a range of the sorted keys. */
  private recount (tokens: readonly string[]): { count: number, ms: number, nanos: number, revision: number } {
    const out = { count: 0, ms: 0, nanos: 0, revision: 0 }
    const [lo, hi] = this.rangeUnder(tokens)
    const all = this.allKeys as SortedSlots
    for (let i = lo; i < hi; i++) {
      const slot = all.slotAt(i)
      const ms = this.entries.updatedAt(slot)
      const nanos = this.entries.nanosAt(slot)
      out.count++
      if (ms > out.ms || (ms === out.ms && nanos >= out.nanos)) Object.assign(out, { ms, nanos, revision: this.entries.revisionAt(slot) })
    }
    return out
  }

  /** Where the keys under a key's leading `tokens` are in the sorted keys (a prefix's range): none while the snapshot loads. */
  private rangeUnder (tokens: readonly string[]): [number, number] {
    const all = this.allKeys
    if (all === undefined) return [0, 0]
    const prefix = tokens.join('.')
    return tokens.length === FIELDS[this.what].length ? [all.lowerBound(prefix), all.upperBound(prefix)] : [all.lowerBound(`${prefix}.`), all.lowerBound(`${prefix}/`)]
  }

  /**
   * How many entries under `tokens` were written after `at`, and the earliest of them: what a needs
   * module waits on (tally.ts). A node's rows read each of its modules so, with no object an entry.
   */
  private waitingAfter (tokens: readonly string[], at: Instant | undefined): { waiting: number, since: Instant | undefined } {
    const [lo, hi] = this.rangeUnder(tokens)
    const all = this.allKeys as SortedSlots
    const { entries } = this
    let waiting = 0
    let sinceMs = Infinity
    let sinceNanos = 0
    for (let i = lo; i < hi; i++) {
      const slot = all.slotAt(i)
      const ms = entries.updatedAt(slot)
      const nanos = entries.nanosAt(slot)
      if (at !== undefined && (ms < at.ms || (ms === at.ms && nanos <= at.nanos))) continue
      waiting++
      if (ms < sinceMs || (ms === sinceMs && nanos < sinceNanos)) {
        sinceMs = ms
        sinceNanos = nanos
      }
    }
    return { waiting, since: waiting === 0 ? undefined : { ms: sinceMs, nanos: sinceNanos } }
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

  /**
   * An object equal (===) only to itself while these contents hold what they hold now: another
   * after each change applied and each refusal of more cursors, and other contents (a read again,
   * at the same revision too) have their own. What is read from them can be shared while it holds.
   */
  get state (): object {
    this.stateNow ??= {}
    return this.stateNow
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
    this.stateNow = undefined
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

  /**
   * The keys changed after `revision` that `filter` may keep (the caller checks each), oldest change
   * first, each once, at its latest change. None when the filter's own bound (its narrowest set's
   * revision and that of the out-of-shape keys it may keep) is not after `revision`: a cursor the
   * service gave is often that revision (a list's, a stream's snapshot's), and read from it every
   * later change of the bucket would be read and left out, for each narrow filter (1000 streams on
   * distinct filters at 300k keys took ~4 minutes to open). Read from that set and its deletions
   * when the set is much smaller than the log after `revision`: a narrow filter's old cursor then
   * costs the filter's own keys (a held wait on one node and module, its cursor from before a load
   * of 300k keys, read them all at each wake: ~170 ms). bench/RESULTS.md has both.
   */
  changesSinceOf (filter: FieldValues, revision: number): Iterable<[key: string, revision: number]> {
    if (filter.size === 0 || !this.indexed) return this.changesSince(revision)
    const { set, positions } = this.candidates(filter)
    const oddBound = this.outOfShapeBound(filter)
    if (Math.max(set.revision, oddBound, this.expired) <= revision) return []
    // The log alone holds the out-of-shape keys' changes in order.
    if (oddBound > revision || set.size * SET_READ_COST >= this.log.countAfter(revision)) return this.changesSince(revision)
    const changed: Array<[string, number]> = []
    for (let i = 0; i < set.size; i++) {
      const slot = set.slotAt(i)
      const at = this.entries.revisionAt(slot)
      if (at > revision) changed.push([this.entries.keys.keyAt(slot), at])
    }
    for (const key of this.goneOf(filter, positions)) {
      const at = this.deleted.get(key) as number
      if (at > revision) changed.push([key, at])
    }
    return changed.sort((a, b) => a[1] - b[1])
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
    this.stateNow = undefined
    const put = e.operation === 'PUT'
    const n = (put ? this.addArrived(e) : undefined) ?? this.change(e.key, revision, put, e)
    // A bucket that deletes nothing has its keys hashed for no map here.
    if (put) {
      if (this.deleted.size !== 0) this.deleted.delete(e.key)
    } else this.deleted.set(e.key, revision)
    this.log.record(n, revision)
    this.log.compact(this.entries.size + this.outOfShapeHeld.size + this.deleted.size, this.currentOf)
  }

  /**
   * Puts a key never put, of the bucket's shape, from the bytes it arrived in while the contents
   * load (no index to place it in yet), and gives its slot: no string of the key is made, which a
   * load of millions of keys paid for each (bench/RESULTS.md). Undefined for any other change, which
   * `change` applies as it always does.
   */
  private addArrived (e: KvChange): number | undefined {
    const bytes = e.keyBytes
    if (bytes === undefined || this.indexed || !wellFormedBytes(this.what, bytes) || this.held.keys.slotOf(bytes) !== undefined) return undefined
    return this.held.addBytes(bytes, e.revision, e.value, e.created.getTime(), e.nanos)
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
        this.counting?.rewrite(key, old, e.created.getTime(), e.nanos ?? 0, revision)
      } else {
        this.held.delete(slot)
        this.counting?.remove(key, old)
      }
      if (this.indexed) this.index(fieldsOf(this.what, key), revision, put ? undefined : { key, put })
      return slot
    }
    if (!put) {
      // The deletion of a key this generation does not hold: no index holds it.
      this.changeOutOfShape(key, revision, put, undefined)
      return slot ?? this.otherNumber(key)
    }
    // Indexed, the key is read once for its shape and its index values; while a load reads the
    // bucket no index is built yet, so its shape is only checked. The shape comes first: an
    // in-shape key is never among the out-of-shape ones, so a load looks for none of its keys there.
    const parsed = this.indexed ? parseKey(this.what, key) : undefined
    const problem = parsed === undefined ? shapeProblem(this.what, key) : parsed.ok ? undefined : parsed.reason
    if (problem !== undefined) {
      // An out-of-shape key: no index holds it.
      this.changeOutOfShape(key, revision, put, problem)
      return this.otherNumber(key)
    }
    const added = this.held.add(key, slot, revision, e.value, e.created.getTime(), e.nanos)
    this.counting?.add(key, e.created.getTime(), e.nanos ?? 0, revision)
    if (parsed?.ok === true) this.index(parsed.values, revision, { key, put, slot: added })
    return added
  }

  private changeOutOfShape (key: string, revision: number, put: boolean, reason: string | undefined): void {
    if (put) {
      const json = outOfShapeJson(key, revision, reason as string)
      if (!this.outOfShapeHeld.has(key)) {
        if (this.indexed) this.outOfShapeOrder.add(key)
        this.counting?.outOfShape(key, 1)
      }
      const tokens = key.split('.')
      this.outOfShapeHeld.set(key, { key, tokens, revision, reason: reason as string, json, bytes: Buffer.byteLength(json) })
      this.oddGone.delete(key)
      this.markOutOfShape(tokens, revision)
      return
    }
    const held = this.outOfShapeHeld.get(key)
    if (held !== undefined) {
      this.outOfShapeHeld.delete(key)
      if (this.indexed) this.outOfShapeOrder.delete(key)
      this.counting?.outOfShape(key, -1)
      this.oddGone.add(key)
      this.markOutOfShape(held.tokens, revision)
      return
    }
    // The deletion of a key never held: its fields, when it has them, say which answers it touches.
    const parsed = parseKey(this.what, key)
    if (!parsed.ok) {
      this.oddGone.add(key)
      this.markOutOfShape(key.split('.'), revision)
    } else if (this.indexed) this.index(parsed.values, revision, { key, put })
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

  /**
   * A revision no earlier than the last change of an out-of-shape key `filter` keeps, which moves
   * with every such change: the least of its fields' (see outOfShapeAt).
   */
  private outOfShapeBound (filter: FieldValues): number {
    if (!this.outOfShapeSeen) return 0
    let bound = Infinity
    for (const [p, values] of filter) {
      const at = this.outOfShapeAt[p]
      if (at === undefined) continue
      let kept = at.none
      for (const value of values) kept = Math.max(kept, at.byToken.get(tokenOf(FIELDS[this.what][p] as string, value)) ?? 0)
      bound = Math.min(bound, kept)
    }
    return bound === Infinity ? 0 : bound
  }

  /**
   * The last revision that put or deleted an out-of-shape key `filter` keeps, where it may be later
   * than `floor`: only a bound past `floor` has the keys read, as few as they are.
   */
  private outOfShapeRevisionFor (filter: FieldValues, bound: number, floor: number): number {
    if (bound <= floor) return 0
    const kept = tokensMatcher(this.what, filter)
    let revision = 0
    for (const o of this.outOfShapeHeld.values()) if (o.revision > revision && kept(o.tokens)) revision = o.revision
    for (const key of this.oddGone) {
      const at = this.deleted.get(key) as number
      if (at > revision && kept(key.split('.'))) revision = at
    }
    return revision
  }

  /** Marks the change of a key with `fields` in every set that holds it, and moves the key among the sets' members. */
  private index (fields: readonly string[], revision: number, move?: Move): void {
    const all = this.allKeys as SortedSlots
    if (move !== undefined) {
      if (move.put) {
        all.add(move.key, move.slot)
        this.goneAll.delete(move.key)
      } else {
        all.delete(move.key)
        this.goneAll.add(move.key)
      }
      this.ranges.clear()
    }
    all.revision = Math.max(all.revision, revision)
    for (const positions of INDEXES[this.what]) {
      const value = indexValue(fields, positions)
      const revisions = this.prefixes.get(positions)
      if (revisions !== undefined) {
        const was = revisions.get(value)
        if (was === undefined) this.noteValue(positions, value)
        // An emptied range keeps its revision, as an emptied set does.
        revisions.set(value, Math.max(was ?? 0, revision))
        continue
      }
      const byValue = this.indexes.get(positions) as Map<string, SortedSlots>
      let set = byValue.get(value)
      // An emptied set stays: its revision is what an answer narrowed to it reflects.
      if (!set) {
        byValue.set(value, (set = new SortedSlots(this.entries.keys)))
        this.noteValue(positions, value)
      }
      if (move !== undefined) {
        const goneByValue = this.gone.get(positions) as Map<string, SortedKeys>
        if (move.put) {
          set.add(move.key, move.slot)
          goneByValue.get(value)?.delete(move.key)
        } else {
          set.delete(move.key)
          let gone = goneByValue.get(value)
          if (gone === undefined) goneByValue.set(value, (gone = new SortedKeys()))
          gone.add(move.key)
        }
      }
      set.revision = Math.max(set.revision, revision)
    }
  }

  /** Lists a new value of an index led by node under its node. */
  private noteValue (positions: readonly number[], value: string): void {
    const values = this.nodeValues.get(positions)
    if (values === undefined) return
    const node = value.slice(0, value.indexOf(SEP))
    const held = values.get(node)
    if (held === undefined) values.set(node, [value])
    else held.push(value)
  }

  /**
   * The last revision that changed what an answer narrowed by `filter` holds, conservatively: that
   * of the narrowest set holding every match, and of the out-of-shape keys the filter may keep.
   */
  revisionFor (filter: FieldValues, memo?: RevisionMemo): number {
    if (filter.size === 0) return this.revision
    const { set, exact, positions } = this.candidates(filter)
    const bound = this.outOfShapeBound(filter)
    // The set's revision and the out-of-shape bound move with every change the filter keeps: while
    // they hold, the revision read under them does (a write on bob leaves ace's walk unread).
    const coarse = Math.max(set.revision, bound)
    let revision: number
    if (memo !== undefined && memo.generation === this.generation && memo.coarse === coarse) revision = memo.revision
    else {
      const inShape = exact ? set.revision : this.keptRevision(filter, set, positions)
      revision = Math.max(inShape, this.outOfShapeRevisionFor(filter, bound, inShape))
      if (memo !== undefined) Object.assign(memo, { generation: this.generation, coarse, revision })
    }
    return Math.max(revision, this.expired)
  }

  /**
   * The last revision that put or deleted an in-shape key `filter` keeps, read from the set no index
   * matches exactly: its held keys and its deleted ones, each checked. The set's own revision would
   * move with any key of its value (bob's write of `bob.mod1` with ace's answer on node and module).
   * It costs what building the answer costs, which walks the same set; a key is checked only when its
   * revision would raise the result.
   */
  private keptRevision (filter: FieldValues, set: KeySet, positions: readonly number[]): number {
    const kept = fieldsMatcher(filter)
    const { entries, what } = this
    let revision = 0
    for (let i = 0; i < set.size; i++) {
      const slot = set.slotAt(i)
      const at = entries.revisionAt(slot)
      if (at > revision && kept(fieldsOf(what, entries.keys.keyAt(slot)))) revision = at
    }
    for (const key of this.goneOf(filter, positions)) {
      const at = this.deleted.get(key) as number
      if (at > revision && kept(fieldsOf(what, key))) revision = at
    }
    return revision
  }

  /** The deleted in-shape keys of the values of `filter` at the index `positions` (every one, for none). */
  private * goneOf (filter: FieldValues, positions: readonly number[]): Generator<string> {
    if (positions.length === 0) {
      yield * this.goneAll.between('', undefined)
      return
    }
    const values = indexValues(positions, filter) as readonly string[]
    const goneByValue = this.gone.get(positions)
    for (const value of values) {
      if (goneByValue !== undefined) {
        const gone = goneByValue.get(value)
        if (gone !== undefined) yield * gone.between('', undefined)
      } else if (!value.includes('.')) {
        const prefix = value.split(SEP).join('.')
        yield * this.goneAll.between(`${prefix}.`, `${prefix}/`)
      }
    }
  }

  /** Builds the sorted indexes once the snapshot is in: one sort, then every index fills in order. */
  buildIndexes (): void {
    const order = this.entries.keys.sorted((slot) => this.entries.holds(slot))
    const slots = order.slots
    const keys = this.entries.keys
    const filling = INDEXES[this.what].map((positions) => ({ positions, runs: isPrefix(this.what, positions) ? new PrefixRuns(positions) : new SetRuns(positions) }))
    // Each key read once for every index: at 300k keys the load's last step is on the clock. A key
    // that starts with the tokens the build reads of the key before it has that key's fields.
    const read = READ_BY_BUILD[this.what]
    let fields: readonly string[] = []
    let lead: string | undefined
    for (let i = 0; i < slots.length; i++) {
      if (lead === undefined || !order.startsWith(i, lead)) {
        const key = order.keyAt(i)
        fields = fieldsOf(this.what, key)
        lead = read < fields.length ? leadingTokens(key, read) : undefined
      }
      const slot = slots[i] as number
      const revision = this.entries.revisionAt(slot)
      for (const { runs } of filling) runs.add(fields, i, revision)
      this.counts?.addInOrder(fields, this.entries.updatedAt(slot), this.entries.nanosAt(slot), revision)
    }
    this.counts?.endOrder()
    for (const key of this.outOfShapeHeld.keys()) this.counts?.outOfShape(key, 1)
    for (const { positions, runs } of filling) {
      const values = runs instanceof PrefixRuns ? runs.done() : runs.done(keys, slots)
      if (runs instanceof PrefixRuns) this.prefixes.set(positions, values as Map<string, number>)
      else this.indexes.set(positions, values as Map<string, SortedSlots>)
      if (byNode(positions)) {
        this.nodeValues.set(positions, new Map())
        for (const value of values.keys()) this.noteValue(positions, value)
      }
    }
    this.outOfShapeOrder = new SortedKeys([...this.outOfShapeHeld.keys()].sort())
    this.allKeys = new SortedSlots(keys, slots)
    this.allKeys.revision = this.latest
    this.indexGone()
  }

  /** Marks the sets with the deletions seen during the load, and lists the deleted keys in key order (one sort, no insertion each). */
  private indexGone (): void {
    const gone: Array<{ key: string, values: string[] }> = []
    for (const [key, revision] of this.deleted) {
      const parsed = parseKey(this.what, key)
      if (!parsed.ok) continue
      // A deletion seen during the load marks the sets its key would be in.
      this.index(parsed.values, revision)
      gone.push({ key, values: parsed.values })
    }
    gone.sort((a, b) => a.key < b.key ? -1 : 1)
    this.goneAll = new SortedKeys(gone.map((g) => g.key))
    for (const positions of INDEXES[this.what]) {
      if (this.prefixes.has(positions)) continue
      const byValue = new Map<string, string[]>()
      for (const { key, values } of gone) {
        const value = indexValue(values, positions)
        const keys = byValue.get(value)
        if (keys === undefined) byValue.set(value, [key])
        else keys.push(key)
      }
      this.gone.set(positions, new Map([...byValue].map(([value, keys]) => [value, new SortedKeys(keys)])))
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
   * revision that put or deleted a key holding it: read from the field's index (facets, docs/glance.md).
   */
  private valuesAt (position: number): Map<string, Counted> {
    const positions = INDEXES[this.what].find((p) => p.length === 1 && p[0] === position)
    if (positions === undefined) throw new Error(`${this.what} keeps no index of field ${position}`)
    const out = new Map<string, Counted>()
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
   * Each value of the field at `position` among the entries `filter` keeps, with how many hold it
   * and the last revision that put or deleted a key the filter keeps holding it (facets: docs/glance.md).
   * Narrowed to nodes alone (every facets request of a scoped token) it reads the node's values of
   * an index led by node, at a cost in proportion to them; otherwise it counts over the narrowest set.
   */
  valuesKept (filter: FieldValues, position: number): Map<string, Counted> {
    if (filter.size === 0) return this.valuesAt(position)
    const nodes = filter.size === 1 ? filter.get(0) : undefined
    const positions = INDEXES[this.what].find((p) => p.length === (position === 0 ? 1 : 2) && p[0] === 0 && p[p.length - 1] === position)
    if (nodes === undefined || positions === undefined) return this.valuesCounted(filter, position)
    const out = new Map<string, Counted>()
    // A node's emptied set counts nothing, but its revision is that of a kept key holding the value another node holds.
    const add = (value: string, set: KeySet): void => {
      const c = out.get(value)
      if (c === undefined) out.set(value, { count: set.size, revision: set.revision })
      else Object.assign(c, { count: c.count + set.size, revision: Math.max(c.revision, set.revision) })
    }
    for (const node of nodes) {
      if (position === 0) add(node, this.setOf(positions, node))
      else for (const value of this.nodeValues.get(positions)?.get(node) ?? []) add(value.slice(node.length + 1), this.setOf(positions, value))
    }
    for (const [value, c] of out) if (c.count === 0) out.delete(value)
    return out
  }

  /** As `valuesKept`, counted over the narrowest set `filter` names: its held keys, then its deleted ones for the values' revisions. */
  private valuesCounted (filter: FieldValues, position: number): Map<string, Counted> {
    const { set, exact, positions } = this.candidates(filter)
    const kept = fieldsMatcher(filter)
    const { entries, what } = this
    const out = new Map<string, Counted>()
    for (let i = 0; i < set.size; i++) {
      const slot = set.slotAt(i)
      const fields = fieldsOf(what, entries.keys.keyAt(slot))
      if (!exact && !kept(fields)) continue
      const value = fields[position] as string
      const revision = entries.revisionAt(slot)
      const c = out.get(value)
      if (c === undefined) out.set(value, { count: 1, revision })
      else Object.assign(c, { count: c.count + 1, revision: Math.max(c.revision, revision) })
    }
    for (const key of this.goneOf(filter, positions)) {
      const fields = fieldsOf(what, key)
      const c = out.get(fields[position] as string)
      if (c !== undefined && kept(fields)) c.revision = Math.max(c.revision, this.deleted.get(key) as number)
    }
    return out
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
