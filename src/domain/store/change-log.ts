// A bucket's changes in revision order, so that "what changed since revision R" (docs/following-changes.md) costs the
// changes after R, not the size of the bucket. Records a later change to the same key supersedes
// are skipped when read and dropped when the log is compacted.

import { inPage, PAGE, PagedColumn, WholeColumn } from './paged-column.js'
import { partitionPoint } from './partition.js'

/** The revision of a key's latest change (put or deletion), or undefined when the key is unknown. */
export type CurrentRevision = (key: number) => number | undefined

/**
 * Records in paged columns, 8 bytes a record (a key's number, its revision in 32 bits until it
 * needs more), not JS arrays of 8-byte values grown by copies: at 300k keys the log holds a record
 * a key.
 */
const keyColumn = (): PagedColumn<Int32Array> => new PagedColumn(() => new Int32Array(PAGE))

/** Keys are named by number (the contents number every key they have seen). */
export class ChangeLog {
  private keys = keyColumn()
  private revisions = new WholeColumn()
  private length = 0

  /** `slack`: records past twice the live ones that the log may hold before it is compacted. */
  constructor (private readonly slack = 4096) {}

  get size (): number {
    return this.length
  }

  /** Notes a change; revisions arrive in increasing order, as a watch delivers them. */
  record (key: number, revision: number): void {
    const i = this.length++
    this.keys.grow(i)
    this.revisions.grow(i)
    this.keys.pageOf(i)[inPage(i)] = key
    this.revisions.set(i, revision)
  }

  private keyAt (i: number): number {
    return this.keys.pageOf(i)[inPage(i)] as number
  }

  private revisionAt (i: number): number {
    return this.revisions.at(i)
  }

  /** How many records follow `revision`: what reading the changes after it walks. */
  countAfter (revision: number): number {
    return this.length - this.firstAfter(revision)
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
    this.keys = keyColumn()
    this.revisions = new WholeColumn()
    this.length = 0
    for (let i = 0; i < length; i++) {
      const key = keys.pageOf(i)[inPage(i)] as number
      const rev = revisions.at(i)
      if (current(key) === rev) this.record(key, rev)
    }
  }
}
