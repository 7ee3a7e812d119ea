// Recent answers kept by question, each with the state it was built from: while a bucket is quiet
// a repeated question (a console polling, a module asking at start) costs a lookup, not a build.

/** The most of the cache one answer may take: a larger one would push out most of the others for one question. */
const ONE_ANSWER_SHARE = 0.25

/** Least recently used first out, bounded by count and by bytes. */
export class AnswerCache<T> {
  private readonly entries = new Map<string, { version: string, value: T, bytes: number }>()
  private bytes = 0

  constructor (private readonly maxBytes = 16 * 1024 * 1024, private readonly maxEntries = 1024) {}

  /** The value kept for `key` if it was built from `version`. */
  get (key: string, version: string): T | undefined {
    const hit = this.entries.get(key)
    if (hit === undefined) return undefined
    this.entries.delete(key)
    if (hit.version !== version) {
      this.bytes -= hit.bytes
      return undefined
    }
    this.entries.set(key, hit)
    return hit.value
  }

  set (key: string, version: string, value: T, bytes: number): void {
    if (bytes > this.maxBytes * ONE_ANSWER_SHARE) return
    const old = this.entries.get(key)
    if (old !== undefined) {
      this.entries.delete(key)
      this.bytes -= old.bytes
    }
    this.entries.set(key, { version, value, bytes })
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
