// Recent values kept by key, each with what it was made from (its version): while a bucket is quiet
// a repeated question (a console polling, a module asking at start) costs a lookup, not a build.
// The answers of the domain and the questions of the gateway's URLs are kept so.

/** The most of the cache one value may take: a larger one would push out most of the others for one key. */
const ONE_VALUE_SHARE = 0.25

/** Least recently used first out, bounded by count and by bytes. */
export class RecentlyUsed<T, V = string> {
  private readonly entries = new Map<string, { version: V, value: T, bytes: number }>()
  private bytes = 0
  /** The key last kept or found: already the most recent, so a hit on it moves nothing (a move allocates). */
  private newest: string | undefined

  constructor (private readonly maxBytes = 16 * 1024 * 1024, private readonly maxEntries = 1024) {}

  /** The value kept for `key` if it was built from `version`. */
  get (key: string, version: V): T | undefined {
    const hit = this.entries.get(key)
    if (hit === undefined) return undefined
    if (hit.version !== version) {
      this.entries.delete(key)
      this.bytes -= hit.bytes
      return undefined
    }
    if (key !== this.newest) {
      this.entries.delete(key)
      this.entries.set(key, hit)
      this.newest = key
    }
    return hit.value
  }

  /** The value kept for `key` if it was made for `version`; else what `make` makes, kept. */
  obtain (key: string, version: V, make: () => T, bytesOf: (value: T) => number): T {
    let value = this.get(key, version)
    if (value === undefined) {
      value = make()
      this.set(key, version, value, bytesOf(value))
    }
    return value
  }

  set (key: string, version: V, value: T, bytes: number): void {
    if (bytes > this.maxBytes * ONE_VALUE_SHARE) return
    const old = this.entries.get(key)
    if (old !== undefined) {
      this.entries.delete(key)
      this.bytes -= old.bytes
    }
    this.entries.set(key, { version, value, bytes })
    this.newest = key
    this.bytes += bytes
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes && this.entries.size <= this.maxEntries) break
      this.entries.delete(oldest)
      this.bytes -= entry.bytes
    }
  }

  get size (): number {
    return this.entries.size
  }
}
