// The answer document as both transports send it, and the cache of answers that the bucket
// requests and the overviews share: a leaf module, so that neither imports the other for it.

import { RecentlyUsed } from './recently-used.js'

/** An answer document as the transports send it, and the state it was built from. */
export class Answer {
  /**
   * Its UTF-8 bytes, encoded once: a repeated request on a quiet bucket gets the same answer from
   * the cache, and encoding 13 KB on every request was a fifth to a third of either face's time.
   * Only the bytes are kept, so what the answer cache counts is what it holds.
   */
  readonly bytes: Buffer

  constructor (
    /** The answer document, serialized (or already encoded): everything a client reads is in here. */
    json: string | Buffer,
    /** The state it was built from (see Provisioning.tag). */
    readonly tag: string
  ) {
    this.bytes = typeof json === 'string' ? Buffer.from(json) : json
  }

  /** The document as text (decoded again: for tests and tools, never on the hot path). */
  get json (): string {
    return this.bytes.toString()
  }
}

/** The answer cache's bound: the bytes of the answers it keeps. */
const ANSWER_CACHE_BYTES = 16 * 1024 * 1024
const ANSWER_CACHE_ENTRIES = 1024
/** What an answer holds beyond its bytes and its key: the object, its tag, the cache's slot. */
const ANSWER_OVERHEAD = 256

/** A cache of answers bounded by the bytes they hold: the bucket requests' and the overviews' own. */
export function answerCache (): RecentlyUsed<Answer> {
  return new RecentlyUsed<Answer>({ maxBytes: ANSWER_CACHE_BYTES, maxEntries: ANSWER_CACHE_ENTRIES, bytesOf: (answer, key) => answer.bytes.length + 2 * (key.length + answer.tag.length) + ANSWER_OVERHEAD })
}

export interface AskOptions {
  /** The most bytes the serialized answer may take (the bus: the connection's max payload). */
  maxBytes?: number
  /** The limit when the request gives none. */
  defaultLimit?: number
}
