// A sorted set of keys in code-unit order: what every answer pages through. Reads are binary
// searches over a contiguous array; an update costs one memmove.

import { partitionPoint } from './partition.js'

export class SortedKeys {
  private readonly keys: string[]
  /** The last revision that put or deleted a key of this set (an answer narrowed to it moves with it). */
  revision = 0

  /** Takes ownership of `sorted`, which must already be in order and without repeats. */
  constructor (sorted: string[] = []) {
    this.keys = sorted
  }

  get size (): number {
    return this.keys.length
  }

  /** The position of the first key greater than `key` (the start of the page after it). */
  upperBound (key: string): number {
    return partitionPoint(this.keys.length, (i) => (this.keys[i] as string) <= key)
  }

  private lowerBound (key: string): number {
    return partitionPoint(this.keys.length, (i) => (this.keys[i] as string) < key)
  }

  add (key: string): void {
    const at = this.lowerBound(key)
    if (this.keys[at] !== key) this.keys.splice(at, 0, key)
  }

  delete (key: string): void {
    const at = this.lowerBound(key)
    if (this.keys[at] === key) this.keys.splice(at, 1)
  }

  at (i: number): string | undefined {
    return this.keys[i]
  }

  /** The keys from `from` on and before `to` (to the end without it), in order. */
  * between (from: string, to: string | undefined): Generator<string> {
    const end = to === undefined ? this.keys.length : this.lowerBound(to)
    for (let i = this.lowerBound(from); i < end; i++) yield this.keys[i] as string
  }
}

/** What an answer pages through: the slots of keys in code-unit order, and the last revision that changed them. */
export interface KeySet {
  readonly size: number
  readonly revision: number
  /** The position of the first key greater than `key` (the start of the page after it). */
  upperBound: (key: string) => number
  /** The slot of the key at position `i`, which must be below `size`. */
  slotAt: (i: number) => number
}

/** Keys held by slot elsewhere: each slot's key, and how it compares with a key (its sign). */
export interface KeysBySlot {
  keyAt: (slot: number) => string
  compareAt: (slot: number, key: string) => number
}

/**
 * A sorted set of slots of keys another structure holds (the bucket's entries), in their keys'
 * code-unit order: 4 bytes a member, where a set of keys holds an 8-byte pointer (a needs entry is
 * in six sets).
 */
export class SortedSlots implements KeySet {
  private slots: Int32Array
  private length: number
  revision = 0

  /** Takes ownership of `sorted`: slots whose keys are in order and without repeats. */
  constructor (private readonly keys: KeysBySlot, sorted: Int32Array = new Int32Array(0)) {
    this.slots = sorted
    this.length = sorted.length
  }

  get size (): number {
    return this.length
  }

  slotAt (i: number): number {
    return this.slots[i] as number
  }

  upperBound (key: string): number {
    return partitionPoint(this.length, (i) => this.keys.compareAt(this.slots[i] as number, key) <= 0)
  }

  /** The position of the first key not less than `key`. */
  lowerBound (key: string): number {
    return partitionPoint(this.length, (i) => this.keys.compareAt(this.slots[i] as number, key) < 0)
  }

  /** Adds the slot of `key` unless the set holds `key`. */
  add (key: string, slot: number): void {
    const at = this.lowerBound(key)
    if (at < this.length && this.keys.compareAt(this.slots[at] as number, key) === 0) return
    if (this.length === this.slots.length) {
      const more = new Int32Array(Math.max(8, Math.ceil(this.length * 1.5)))
      more.set(this.slots)
      this.slots = more
    }
    this.slots.copyWithin(at + 1, at, this.length)
    this.slots[at] = slot
    this.length++
  }

  delete (key: string): void {
    const at = this.lowerBound(key)
    if (at === this.length || this.keys.compareAt(this.slots[at] as number, key) !== 0) return
    this.slots.copyWithin(at, at + 1, this.length)
    this.length--
  }
}

/** The keys of a sorted set from position `lo` up to `hi`: one node's keys, in the set of all keys. */
export class KeyRange implements KeySet {
  constructor (private readonly set: KeySet, private readonly lo: number, private readonly hi: number, readonly revision: number) {}

  get size (): number {
    return this.hi - this.lo
  }

  slotAt (i: number): number {
    return this.set.slotAt(this.lo + i)
  }

  upperBound (key: string): number {
    return Math.min(Math.max(this.set.upperBound(key), this.lo), this.hi) - this.lo
  }
}

/**
 * The union of disjoint sets (one index's sets of several values) in key order, read by merging
 * them: reading positions in ascending order, from 0 or from the position `upperBound` gave, costs
 * a comparison of the parts' next keys a position; going back merges again from the start.
 */
export class KeyUnion implements KeySet {
  readonly size: number
  /** Each part's position of the key at `at`, and those keys. */
  private readonly heads: number[]
  private readonly headKeys: Array<string | undefined>
  private at = 0

  constructor (private readonly keys: KeysBySlot, private readonly parts: readonly KeySet[], readonly revision: number) {
    this.size = parts.reduce((n, part) => n + part.size, 0)
    this.heads = parts.map(() => 0)
    this.headKeys = parts.map((part) => part.size > 0 ? keys.keyAt(part.slotAt(0)) : undefined)
  }

  upperBound (key: string): number {
    let position = 0
    for (let j = 0; j < this.parts.length; j++) position += this.move(j, (this.parts[j] as KeySet).upperBound(key))
    this.at = position
    return position
  }

  slotAt (i: number): number {
    if (i < this.at) {
      for (let j = 0; j < this.parts.length; j++) this.move(j, 0)
      this.at = 0
    }
    for (;;) {
      const j = this.least()
      if (this.at === i) return (this.parts[j] as KeySet).slotAt(this.heads[j] as number)
      this.move(j, (this.heads[j] as number) + 1)
      this.at++
    }
  }

  /** The part whose next key is the least. */
  private least (): number {
    let best = -1
    let bestKey: string | undefined
    for (let j = 0; j < this.headKeys.length; j++) {
      const key = this.headKeys[j]
      if (key !== undefined && (bestKey === undefined || key < bestKey)) {
        best = j
        bestKey = key
      }
    }
    return best
  }

  /** Moves part `j` to its position `to`; gives `to`. */
  private move (j: number, to: number): number {
    const part = this.parts[j] as KeySet
    this.heads[j] = to
    this.headKeys[j] = to < part.size ? this.keys.keyAt(part.slotAt(to)) : undefined
    return to
  }
}
