// A bucket's changes in revision order, so that "what changed since revision R" (SPEC §8) costs the
// changes after R, not the size of the bucket. Records a later change to the same key supersedes
// are skipped when read and dropped when the log is compacted.

import { partitionPoint } from './partition.js'

/** The revision of a key's latest change (put or deletion), or undefined when the key is unknown. */
export type CurrentRevision = (key: number) => number | undefined

/**
 * Records in pages that stay put, 8 bytes a record (a key's number, its revision), not JS arrays
 * of 8-byte values grown by copies: at 300k keys the log holds a record a key. A page holds its
 * revisions in 32 bits until one needs more (a stream past 4 billion messages), then in 64.
 */
const PAGE_BITS = 13
const PAGE = 1 << PAGE_BITS
const MAX_UINT32 = 0xffff_ffff

/** Keys are named by number (the contents number every key they have seen). */
export class ChangeLog {
  private keys: Int32Array[] = []
  private revisions: Array<Uint32Array | Float64Array> = []
  private length = 0

  /** `slack`: records past twice the live ones that the log may hold before it is compacted. */
  constructor (private readonly slack = 4096) {}

  get size (): number {
    return this.length
  }

  /** Notes a change; revisions arrive in increasing order, as a watch delivers them. */
  record (key: number, revision: number): void {
    const i = this.length++
    if ((i & (PAGE - 1)) === 0) {
      this.keys.push(new Int32Array(PAGE))
      this.revisions.push(new Uint32Array(PAGE))
    }
    ;(this.keys[i >>> PAGE_BITS] as Int32Array)[i & (PAGE - 1)] = key
    let page = this.revisions[i >>> PAGE_BITS] as Uint32Array | Float64Array
    if (revision > MAX_UINT32 && page instanceof Uint32Array) this.revisions[i >>> PAGE_BITS] = page = Float64Array.from(page)
    page[i & (PAGE - 1)] = revision
  }

  private keyAt (i: number): number {
    return (this.keys[i >>> PAGE_BITS] as Int32Array)[i & (PAGE - 1)] as number
  }

  private revisionAt (i: number): number {
    return (this.revisions[i >>> PAGE_BITS] as Uint32Array | Float64Array)[i & (PAGE - 1)] as number
  }

  /** The position of the first record after `revision`. */
  private firstAfter (revision: number): number {
    return partitionPoint(this.length, (i) => this.revisionAt(i) <= revision)
  }

  /** The keys changed after `revision`, oldest change first, each once, at its latest change. */
  * since (revision: number, current: CurrentRevision): Generator<[key: number, revision: number]> {
    for (let i = this.firstAfter(revision); i < this.length; i++) {
      const key = this.keyAt(i)
      const rev = this.revisionAt(i)
      if (current(key) === rev) yield [key, rev]
    }
  }

  /** Drops superseded records once they outnumber the live ones, keeping the cost of a record constant. */
  compact (live: number, current: CurrentRevision): void {
    if (this.length <= 2 * live + this.slack) return
    const keys = this.keys
    const revisions = this.revisions
    const length = this.length
    this.keys = []
    this.revisions = []
    this.length = 0
    for (let i = 0; i < length; i++) {
      const key = (keys[i >>> PAGE_BITS] as Int32Array)[i & (PAGE - 1)] as number
      const rev = (revisions[i >>> PAGE_BITS] as Uint32Array | Float64Array)[i & (PAGE - 1)] as number
      if (current(key) === rev) this.record(key, rev)
    }
  }
}
