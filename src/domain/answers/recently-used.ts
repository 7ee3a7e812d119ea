// Recent values kept by key, each with what it was made from: while a bucket is quiet
// a repeated request (a console polling, a module asking at start) costs a lookup, not a build.
// The answers of the domain and the requests of both faces are kept so, each cache bounded by the
// bytes its values really hold (as its owner measures them) and by count.

import { LRUCache } from 'lru-cache'
import { hashOf } from '../store/key-table.js'

/** The most of the cache one value may take: a larger one would push out most of the others for one key. */
const ONE_VALUE_SHARE = 0.25

export interface Bounds<T> {
  /** The most bytes kept, as `bytesOf` counts them. */
  maxBytes: number
  maxEntries: number
  /** The bytes `value`, kept under `key`, holds: the key counts, and whatever the value alone keeps alive. */
  bytesOf: (value: T, key: string) => number
}

/**
 * The keys asked lately, as one bit of their hash each (TinyLFU's doorkeeper): sixteen bits a key of
 * its window, so that false positives stay under 1 in 16 at the fullest (8 KB for the caches of
 * 1024 values). It forgets them all after `window` keys it did not hold.
 */
class AskedBefore {
  private readonly bits: Uint32Array
  private readonly mask: number
  private added = 0

  constructor (private readonly window: number) {
    const size = Math.max(1024, 2 ** Math.ceil(Math.log2(16 * window)))
    this.bits = new Uint32Array(size / 32)
    this.mask = size - 1
  }

  /** Whether `key` was asked lately; notes that it is asked now. */
  note (key: string): boolean {
    const h = hashOf(key) & this.mask
    const word = h >>> 5
    const bit = 1 << (h & 31)
    const words = this.bits
    if (((words[word] as number) & bit) !== 0) return true
    if (++this.added > this.window) {
      words.fill(0)
      this.added = 1
    }
    words[word] = (words[word] as number) | bit
    return false
  }
}

/** Least recently used first out (lru-cache: a hit moves two indexes of a typed array, no allocation of the map). */
export class RecentlyUsed<T extends object | string, V = string> {
  private readonly cache: LRUCache<string, { madeFrom: V, value: T }>
  private readonly asked: AskedBefore

  constructor ({ maxBytes, maxEntries, bytesOf }: Bounds<T>) {
    this.cache = new LRUCache({
      max: maxEntries,
      maxSize: maxBytes,
      maxEntrySize: maxBytes * ONE_VALUE_SHARE,
      // lru-cache takes a positive whole number.
      sizeCalculation: (kept, key) => Math.max(1, Math.ceil(bytesOf(kept.value, key)))
    })
    // A key asked again after this many others would have left the cache anyway.
    this.asked = new AskedBefore(4 * maxEntries)
  }

  /** The value kept for `key` if it was built from `madeFrom`. */
  get (key: string, madeFrom: V): T | undefined {
    const hit = this.cache.get(key)
    if (hit === undefined) return undefined
    if (hit.madeFrom !== madeFrom) {
      this.cache.delete(key)
      return undefined
    }
    return hit.value
  }

  /**
   * The value kept for `key` if it was made for `madeFrom`; else what `make` makes, kept when `key`
   * was asked lately. A key asked once is not kept: a run of one-off requests (a console walking
   * every node once, a client paging) neither pushes out what is asked again and again nor leaves
   * its values for the old generation's collector, which cost a distinct request a quarter of its
   * CPU (bench/RESULTS.md). A key asked again is made once more, then kept.
   */
  obtain (key: string, madeFrom: V, make: () => T): T {
    let value = this.get(key, madeFrom)
    if (value === undefined) {
      value = make()
      if (this.asked.note(key)) this.set(key, madeFrom, value)
    }
    return value
  }

  /** Keeps `value`, unless it alone would take more than a quarter of the cache. */
  set (key: string, madeFrom: V, value: T): void {
    this.cache.set(key, { madeFrom, value })
  }

  get size (): number {
    return this.cache.size
  }

  /** The bytes kept, as `bytesOf` counted them. */
  get bytes (): number {
    return this.cache.calculatedSize
  }
}
