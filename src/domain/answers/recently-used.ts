// Recent values kept by key, each with what it was made from: while a bucket is quiet
// a repeated request (a console polling, a module asking at start) costs a lookup, not a build.
// The answers of the domain and the requests of both faces are kept so, each cache bounded by the
// bytes its values really hold (as its owner measures them) and by count.

import { LRUCache } from 'lru-cache'

/** The most of the cache one value may take: a larger one would push out most of the others for one key. */
const ONE_VALUE_SHARE = 0.25

export interface Bounds<T> {
  /** The most bytes kept, as `bytesOf` counts them. */
  maxBytes: number
  maxEntries: number
  /** The bytes `value`, kept under `key`, holds: the key counts, and whatever the value alone keeps alive. */
  bytesOf: (value: T, key: string) => number
}

/** Least recently used first out (lru-cache: a hit moves two indexes of a typed array, no allocation of the map). */
export class RecentlyUsed<T extends object | string, V = string> {
  private readonly cache: LRUCache<string, { madeFrom: V, value: T }>

  constructor ({ maxBytes, maxEntries, bytesOf }: Bounds<T>) {
    this.cache = new LRUCache({
      max: maxEntries,
      maxSize: maxBytes,
      maxEntrySize: maxBytes * ONE_VALUE_SHARE,
      // lru-cache takes a positive whole number.
      sizeCalculation: (kept, key) => Math.max(1, Math.ceil(bytesOf(kept.value, key)))
    })
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

  /** The value kept for `key` if it was made for `madeFrom`; else what `make` makes, kept. */
  obtain (key: string, madeFrom: V, make: () => T): T {
    let value = this.get(key, madeFrom)
    if (value === undefined) {
      value = make()
      this.set(key, madeFrom, value)
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
