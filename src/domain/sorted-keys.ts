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
    return partitionPoint(this.keys, (k) => k <= key)
  }

  private lowerBound (key: string): number {
    return partitionPoint(this.keys, (k) => k < key)
  }

  /** Adds a key greater than every key held: how a set is filled in order. */
  push (key: string): void {
    this.keys.push(key)
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
}
