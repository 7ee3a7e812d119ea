// A bucket's changes in revision order, so that "what changed since revision R" (SPEC §8) costs the
// changes after R, not the size of the bucket. Records a later change to the same key supersedes
// are skipped when read and dropped when the log is compacted.

import { partitionPoint } from './partition.js'

/** The revision of a key's latest change (put or deletion), or undefined when the key is unknown. */
export type CurrentRevision<K> = (key: K) => number | undefined

/** `K`: how a record names its key (the contents name a key they hold by its slot, not its string). */
export class ChangeLog<K = string> {
  private keys: K[] = []
  private revisions: number[] = []

  /** `slack`: records past twice the live ones that the log may hold before it is compacted. */
  constructor (private readonly slack = 4096) {}

  get size (): number {
    return this.keys.length
  }

  /** Notes a change; revisions arrive in increasing order, as a watch delivers them. */
  record (key: K, revision: number): void {
    this.keys.push(key)
    this.revisions.push(revision)
  }

  /** The position of the first record after `revision`. */
  private firstAfter (revision: number): number {
    return partitionPoint(this.revisions, (r) => r <= revision)
  }

  /** The keys changed after `revision`, oldest change first, each once, at its latest change. */
  * since (revision: number, current: CurrentRevision<K>): Generator<[key: K, revision: number]> {
    for (let i = this.firstAfter(revision); i < this.keys.length; i++) {
      const key = this.keys[i] as K
      const rev = this.revisions[i] as number
      if (current(key) === rev) yield [key, rev]
    }
  }

  /** Drops superseded records once they outnumber the live ones, keeping the cost of a record constant. */
  compact (live: number, current: CurrentRevision<K>): void {
    if (this.keys.length <= 2 * live + this.slack) return
    const keys: K[] = []
    const revisions: number[] = []
    for (let i = 0; i < this.keys.length; i++) {
      const key = this.keys[i] as K
      const rev = this.revisions[i] as number
      if (current(key) === rev) {
        keys.push(key)
        revisions.push(rev)
      }
    }
    this.keys = keys
    this.revisions = revisions
  }
}
