// A bucket's in-shape entries held as columns: a key maps to a slot number, a slot's revision and
// write time sit in typed arrays and its value's bytes in one shared buffer, as they arrived. An
// entry is read into the JSON it is answered as when an answer takes it. An object and a string an
// entry (the earlier layout) were ~400 bytes of RSS an entry at 300k keys and most of what the
// garbage collector copied and marked while a large bucket loaded.

import { isUtf8 } from 'node:buffer'
import { fieldsOf, FIELDS, isDecoded, type What } from './buckets.js'

/** What answering a value found out about it, so that the check is made once a value. */
const enum Known { unread = 0, json = 1, notJson = 2, notUtf8 = 3 }

/** The JSON of one value: `"value":…` when it is JSON, else `raw`/`rawBase64` and `problem`. */
function valueJson (bytes: Buffer, known: Known): { json: string, known: Known } {
  if (known === Known.notUtf8 || (known === Known.unread && !isUtf8(bytes))) {
    return { json: `"rawBase64":${JSON.stringify(bytes.toString('base64'))},"problem":"the value is not UTF-8 text, so not JSON; its bytes are in rawBase64"`, known: Known.notUtf8 }
  }
  const text = bytes.toString('utf8')
  if (known === Known.json) return { json: `"value":${text.trim()}`, known }
  if (text.trim() === '') return { json: `"raw":${JSON.stringify(text)},"problem":"the value is empty, not JSON"`, known: Known.notJson }
  try {
    JSON.parse(text)
  } catch (err) {
    return { json: `"raw":${JSON.stringify(text)},"problem":${JSON.stringify(`the value is not JSON: ${(err as Error).message}`)}`, known: Known.notJson }
  }
  return { json: `"value":${text.trim()}`, known: Known.json }
}

/** The start of an entry's JSON, up to its value: the key and its fields in the order of the bucket's shape. */
export function entryHead (what: What, key: string, fields: readonly string[]): string {
  // An in-shape key and its tokens hold only characters JSON need not escape; decoded collection
  // names may hold any.
  let out = `{"key":"${key}"`
  FIELDS[what].forEach((name, i) => { out += isDecoded(name) ? `,"${name}":${JSON.stringify(fields[i])}` : `,"${name}":"${fields[i] as string}"` })
  return out
}

/** One in-shape entry as an answer reads it: made on demand from its slot, and short-lived. */
export class StoredEntry {
  private serialized: string | undefined
  private size = 0

  constructor (private readonly store: Entries, readonly key: string, private readonly slot: number) {}

  get revision (): number {
    return this.store.revisionAt(this.slot)
  }

  /** When it was written (ms since the epoch). */
  get updated (): number {
    return this.store.updatedAt(this.slot)
  }

  /** The key's fields in the order of the bucket's shape, decoded: read from the key when asked. */
  get fields (): string[] {
    return fieldsOf(this.store.what, this.key)
  }

  /** Its answer JSON. */
  get json (): string {
    this.serialized ??= this.store.jsonAt(this.slot, this.key)
    return this.serialized
  }

  /** The UTF-8 length of its answer JSON. */
  get bytes (): number {
    if (this.size === 0) this.size = Buffer.byteLength(this.json)
    return this.size
  }
}

/** Serialized entries kept for the answers that take the same entries again (an event stream per reader). */
const RECENT_MAX = 4096
const FIRST_SLOTS = 1024
const FIRST_BYTES = 64 * 1024

/** The in-shape entries of one generation of a bucket, by key. */
export class Entries {
  private readonly slots = new Map<string, number>()
  /** Slots given back by deleted keys, taken again by new ones. */
  private readonly free: number[] = []
  private used = 0
  private revisions = new Float64Array(FIRST_SLOTS)
  private updates = new Float64Array(FIRST_SLOTS)
  private starts = new Uint32Array(FIRST_SLOTS)
  private lengths = new Uint32Array(FIRST_SLOTS)
  private known = new Uint8Array(FIRST_SLOTS)
  /** Every value's bytes, one after the other; an update's old bytes stay until the next compaction. */
  private bytes = Buffer.alloc(FIRST_BYTES)
  private end = 0
  private liveBytes = 0
  private readonly recent = new Map<number, string>()

  constructor (readonly what: What) {}

  get size (): number {
    return this.slots.size
  }

  keys (): IterableIterator<string> {
    return this.slots.keys()
  }

  has (key: string): boolean {
    return this.slots.has(key)
  }

  get (key: string): StoredEntry | undefined {
    const slot = this.slots.get(key)
    return slot === undefined ? undefined : new StoredEntry(this, key, slot)
  }

  revision (key: string): number | undefined {
    const slot = this.slots.get(key)
    return slot === undefined ? undefined : this.revisions[slot]
  }

  /** Puts a new value of a key held, copied (it may be a view into the connection's read buffer); false when the key is not held. */
  update (key: string, revision: number, value: Uint8Array, updated: number): boolean {
    const slot = this.slots.get(key)
    if (slot === undefined) return false
    this.liveBytes -= this.lengths[slot] as number
    this.lengths[slot] = 0
    this.recent.delete(slot)
    this.write(slot, revision, value, updated)
    return true
  }

  /** Puts a key not held yet. */
  add (key: string, revision: number, value: Uint8Array, updated: number): void {
    const slot = this.free.pop() ?? this.grow()
    this.slots.set(key, slot)
    this.write(slot, revision, value, updated)
  }

  private write (slot: number, revision: number, value: Uint8Array, updated: number): void {
    if (this.end + value.length > this.bytes.length) this.makeRoom(value.length)
    this.bytes.set(value, this.end)
    this.revisions[slot] = revision
    this.updates[slot] = updated
    this.starts[slot] = this.end
    this.lengths[slot] = value.length
    this.known[slot] = Known.unread
    this.end += value.length
    this.liveBytes += value.length
  }

  delete (key: string): boolean {
    const slot = this.slots.get(key)
    if (slot === undefined) return false
    this.slots.delete(key)
    this.liveBytes -= this.lengths[slot] as number
    this.lengths[slot] = 0
    this.recent.delete(slot)
    this.free.push(slot)
    return true
  }

  revisionAt (slot: number): number {
    return this.revisions[slot] as number
  }

  updatedAt (slot: number): number {
    return this.updates[slot] as number
  }

  /** The answer JSON of the entry in `slot`. */
  jsonAt (slot: number, key: string): string {
    const kept = this.recent.get(slot)
    if (kept !== undefined) return kept
    const start = this.starts[slot] as number
    const value = valueJson(this.bytes.subarray(start, start + (this.lengths[slot] as number)), this.known[slot] as Known)
    this.known[slot] = value.known
    const json = `${entryHead(this.what, key, fieldsOf(this.what, key))},${value.json},"revision":${this.revisions[slot] as number},"updated":"${new Date(this.updates[slot] as number).toISOString()}"}`
    this.recent.set(slot, json)
    if (this.recent.size > RECENT_MAX) this.recent.delete(this.recent.keys().next().value as number)
    return json
  }

  /** A new slot at the end, doubling the columns when they are full. */
  private grow (): number {
    const slot = this.used++
    if (slot === this.revisions.length) {
      const double = <T extends Float64Array | Uint32Array | Uint8Array>(a: T): T => {
        const b = new (a.constructor as new (n: number) => T)(a.length * 2)
        b.set(a)
        return b
      }
      this.revisions = double(this.revisions)
      this.updates = double(this.updates)
      this.starts = double(this.starts)
      this.lengths = double(this.lengths)
      this.known = double(this.known)
    }
    return slot
  }

  /**
   * Room for `n` more bytes: the live values copied into a buffer twice their size, which also drops
   * what updates and deletions left behind (so a buffer holds at most twice the live bytes).
   */
  private makeRoom (n: number): void {
    const bytes = Buffer.alloc(Math.max(FIRST_BYTES, 2 * (this.liveBytes + n)))
    let end = 0
    for (const slot of this.slots.values()) {
      const start = this.starts[slot] as number
      const length = this.lengths[slot] as number
      this.bytes.copy(bytes, end, start, start + length)
      this.starts[slot] = end
      end += length
    }
    this.bytes = bytes
    this.end = end
  }
}

export function outOfShapeJson (key: string, revision: number, reason: string): string {
  return `{"key":${JSON.stringify(key)},"revision":${revision},"reason":${JSON.stringify(reason)}}`
}
