// A bucket's in-shape entries held as columns: a key maps to a slot number, a slot's revision and
// write time sit in typed arrays and its value's bytes in one shared buffer, as they arrived. An
// entry is read into the JSON it is answered as when an answer takes it. An object and a string an
// entry (the earlier layout) were ~400 bytes of RSS an entry at 300k keys and most of what the
// garbage collector copied and marked while a large bucket loaded.

import { isUtf8 } from 'node:buffer'
import { fieldsOf, FIELDS, isDecoded, type What } from '../wire/key-shapes.js'
import { perBucket } from '../wire/buckets.js'
import { KeyTable } from './key-table.js'
import { inPage, PAGE, PagedColumn, WholeColumn } from './paged-column.js'
import { ByteWriter, copyBytes } from './byte-writer.js'

/** What answering a value found out about it, so that the check is made once a value. */
const enum Known { unread = 0, json = 1, notJson = 2, notUtf8 = 3, deleted = 4 }

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

/**
 * Each bucket's fields as its entries' JSON writes them, in the order of its shape: the property's
 * start, and whether the value is decoded. An in-shape key and its tokens hold only characters JSON
 * need not escape; decoded names (collections) may hold any.
 */
const ENTRY_FIELDS = perBucket((what) => (FIELDS[what] as readonly string[]).map((name) => ({ head: `,"${name}":`, decoded: isDecoded(name) })))

/** Buckets whose fields are their keys' tokens as they stand: an entry writes them from the key, with no split. */
const TOKENS_ARE_FIELDS = perBucket((what) => !(FIELDS[what] as readonly string[]).some(isDecoded))

const latin1 = (text: string): Buffer => Buffer.from(text, 'latin1')
const ENTRY_HEADS = perBucket((what) => ENTRY_FIELDS[what].map(({ head }) => latin1(`${head}"`)))
/** The bytes of an entry's field heads, its tokens' quotes included. */
const ENTRY_HEADS_BYTES = perBucket((what) => ENTRY_HEADS[what].reduce((n, head) => n + head.length + 1, 0))
const KEY_HEAD = latin1('{"key":"')
/** Room for an entry's key and fields beside the key's bytes twice and the heads: `{"key":"` and the quote after the key. */
const ENTRY_FRAME = KEY_HEAD.length + 1

const VALUE_HEAD = latin1(',"value":')
const REVISION_HEAD = latin1(',"revision":')
const UPDATED_HEAD = latin1(',"updated":"')
const QUOTE = 0x22
const DOT = 0x2e

/** Whether a byte is JSON's whitespace, which a JSON value's text may have around it. */
const isJsonSpace = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09

/** The start of an entry's JSON, up to its value: the key and its fields in the order of the bucket's shape. */
export function entryHead (what: What, key: string, fields: readonly string[]): string {
  return `{"key":"${key}"${fieldsJson(what, fields)}`
}

/** A key's fields as an entry's JSON writes them after its key: `,"<field>":<value>` each, in the order of the bucket's shape. */
function fieldsJson (what: What, fields: readonly string[]): string {
  let out = ''
  const described = ENTRY_FIELDS[what]
  for (let i = 0; i < described.length; i++) {
    const { head, decoded } = described[i] as { head: string, decoded: boolean }
    out += decoded ? head + JSON.stringify(fields[i]) : `${head}"${fields[i] as string}"`
  }
  return out
}

/** One in-shape entry as an answer reads it: made on demand from its slot, and short-lived. */
export class StoredEntry {
  private serialized: string | undefined
  private size = 0

  constructor (private readonly store: Entries, private readonly slot: number, private named?: string) {}

  /** Its key: read from the key table when asked (a list written as bytes needs none). */
  get key (): string {
    this.named ??= this.store.keys.keyAt(this.slot)
    return this.named
  }

  /** The length of its key, a byte a character. */
  get keyLength (): number {
    return this.named?.length ?? this.store.keys.lengthAt(this.slot)
  }

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
    this.serialized ??= this.store.jsonAt(this.slot)
    return this.serialized
  }

  /** Writes its answer JSON, as `json` holds it, into `w`, with no string made. */
  writeTo (w: ByteWriter): void {
    if (this.serialized !== undefined) w.utf8(this.serialized)
    else this.store.writeJson(this.slot, w)
  }

  /** The UTF-8 length of its answer JSON. */
  get bytes (): number {
    if (this.size === 0) this.size = Buffer.byteLength(this.json)
    return this.size
  }
}

/** Serialized entries kept for the answers that take the same entries again (an event stream per reader). */
const RECENT_MAX = 4096
/**
 * The bytes of a slab of values. Values grow by slabs that stay put, as the columns by pages
 * (paged-column.ts), not by copies into arrays twice the size.
 */
const SLAB_BITS = 18
const SLAB = 1 << SLAB_BITS
/** Slabs one generation may hold: a value's place packs its slab and its start into 32 bits (4 GB of values). */
const MAX_SLABS = 2 ** (32 - SLAB_BITS)
/** A value longer than this gets a slab of its own, so that it leaves no slab mostly empty. */
const OWN_SLAB = SLAB / 4
const EMPTY = Buffer.alloc(0)
/** Where `jsonAt` writes an entry before it is made text: it keeps the room of the largest entry read so, at most a value's bound (the bus's max payload) and its key. */
const scratch = new ByteWriter()

/**
 * The in-shape entries of one generation of a bucket, by key. Every key put in the generation keeps
 * its slot, deleted or not (as the bucket keeps its deletion marker), so that the indexes and the
 * change log can name a key by its slot.
 */
/** The entries as their readers see them: nothing here changes them (the contents apply every change). */
export type EntriesRead = Omit<Entries, 'add' | 'addBytes' | 'update' | 'delete' | 'keys'> & { readonly keys: Omit<KeyTable, 'add' | 'addBytes'> }

export class Entries {
  /** Every key put in the generation, by slot. */
  readonly keys = new KeyTable()
  private live = 0
  private readonly revisions = new WholeColumn()
  /**
   * Per slot: its write time as whole seconds and the ns within the second, which the modules'
   * states compare: 8 bytes a slot, where ms as a double and the ns within the ms took 12.
   */
  private readonly seconds = new WholeColumn()
  private readonly nanos = new PagedColumn(() => new Uint32Array(PAGE))
  /** Per slot: where its value is (slab × SLAB + start: a slab of its own starts at 0) and its length, two numbers a slot. */
  private readonly places = new PagedColumn(() => new Uint32Array(2 * PAGE))
  private readonly known = new PagedColumn(() => new Uint8Array(PAGE))
  /** Every value's bytes, one after the other in slabs; an update's old bytes stay until the next compaction. */
  private slabs: Buffer[] = []
  /** The slab that takes the next value, and where in it. */
  private slab = -1
  private end = SLAB
  private heldBytes = 0
  private liveBytes = 0
  private readonly recent = new Map<number, string>()

  constructor (readonly what: What) {}

  get size (): number {
    return this.live
  }

  has (key: string): boolean {
    return this.liveSlot(key) !== undefined
  }

  get (key: string): StoredEntry | undefined {
    const slot = this.liveSlot(key)
    return slot === undefined ? undefined : new StoredEntry(this, slot, key)
  }

  /** The entry held in `slot`. */
  at (slot: number): StoredEntry {
    return new StoredEntry(this, slot)
  }

  revision (key: string): number | undefined {
    const slot = this.liveSlot(key)
    return slot === undefined ? undefined : this.revisionAt(slot)
  }

  /** The slot of a key put in this generation, held or deleted since. */
  slotOf (key: string): number | undefined {
    return this.keys.slotOf(key)
  }

  /** Whether the key of `slot` is held (not deleted since it was put). */
  holds (slot: number): boolean {
    return this.known.pageOf(slot)[inPage(slot)] !== Known.deleted
  }

  private liveSlot (key: string): number | undefined {
    const slot = this.keys.slotOf(key)
    return slot === undefined || !this.holds(slot) ? undefined : slot
  }

  /** Puts a new value of the key held in `slot`, copied (it may be a view into the connection's read buffer). */
  update (slot: number, revision: number, value: Uint8Array, updated: number, nanos = 0): void {
    this.liveBytes -= this.lengthAt(slot)
    this.recent.delete(slot)
    this.write(slot, revision, value, updated, nanos)
  }

  /**
   * Puts a key not held and gives its slot: `slot` is its slot when it has one (it was deleted since
   * it was put), else a new one is made. The caller looked it up already: a lookup hashes the key.
   */
  add (key: string, slot: number | undefined, revision: number, value: Uint8Array, updated: number, nanos = 0): number {
    if (slot === undefined) {
      slot = this.keys.add(key)
      this.grow(slot)
    }
    this.live++
    this.write(slot, revision, value, updated, nanos)
    return slot
  }

  /** `add` of a key never put, given as its ASCII bytes (KeyTable.addBytes), as a load reads it. */
  addBytes (key: Uint8Array, revision: number, value: Uint8Array, updated: number, nanos = 0): number {
    const slot = this.keys.addBytes(key)
    this.grow(slot)
    this.live++
    this.write(slot, revision, value, updated, nanos)
    return slot
  }

  private write (slot: number, revision: number, value: Uint8Array, updated: number, nanos: number): void {
    this.revisions.set(slot, revision)
    const seconds = Math.floor(updated / 1000)
    this.seconds.set(slot, seconds)
    this.nanos.pageOf(slot)[inPage(slot)] = (updated - 1000 * seconds) * 1e6 + nanos
    this.place(slot, value)
    this.liveBytes += value.length
    if (this.heldBytes > 2 * this.liveBytes + 2 * SLAB) this.compact()
  }

  /** Copies a value into the slabs and notes where it is. */
  private place (slot: number, value: Uint8Array): void {
    const places = this.places.pageOf(slot)
    const at = 2 * inPage(slot)
    this.known.pageOf(slot)[inPage(slot)] = Known.unread
    places[at + 1] = value.length
    if (value.length === 0) return
    let slab = this.slab
    let start = this.end
    if (value.length > OWN_SLAB) {
      slab = this.newSlab(value.length)
      start = 0
    } else {
      if (this.end + value.length > SLAB) {
        this.slab = this.newSlab(SLAB)
        this.end = 0
      }
      slab = this.slab
      start = this.end
      this.end += value.length
    }
    ;(this.slabs[slab] as Buffer).set(value, start)
    places[at] = slab * SLAB + start
  }

  /** The bytes of the value whose place is at `at` of `places`, in `slabs`. */
  private static bytesAt (slabs: readonly Buffer[], places: Uint32Array, at: number): Buffer {
    const length = places[at + 1] as number
    if (length === 0) return EMPTY
    const where = places[at] as number
    const start = where & (SLAB - 1)
    return (slabs[where >>> SLAB_BITS] as Buffer).subarray(start, start + length)
  }

  private newSlab (size: number): number {
    if (this.slabs.length === MAX_SLABS) throw new Error(`the values of bucket ${this.what} fill ${MAX_SLABS} slabs of ${SLAB} bytes: more than one view can hold`)
    // Not zero-filled: every byte read was written first.
    this.slabs.push(Buffer.allocUnsafeSlow(size))
    this.heldBytes += size
    return this.slabs.length - 1
  }

  /** Deletes the key held in `slot`; it keeps the slot. */
  delete (slot: number): void {
    this.live--
    this.liveBytes -= this.lengthAt(slot)
    this.places.pageOf(slot)[2 * inPage(slot) + 1] = 0
    this.known.pageOf(slot)[inPage(slot)] = Known.deleted
    this.recent.delete(slot)
  }

  revisionAt (slot: number): number {
    return this.revisions.at(slot)
  }

  updatedAt (slot: number): number {
    return 1000 * this.seconds.at(slot) + Math.floor((this.nanos.pageOf(slot)[inPage(slot)] as number) / 1e6)
  }

  /** The ns within the ms of `updatedAt`. */
  nanosAt (slot: number): number {
    return (this.nanos.pageOf(slot)[inPage(slot)] as number) % 1e6
  }

  private lengthAt (slot: number): number {
    return this.places.pageOf(slot)[2 * inPage(slot) + 1] as number
  }

  private valueAt (slot: number): Buffer {
    return Entries.bytesAt(this.slabs, this.places.pageOf(slot), 2 * inPage(slot))
  }

  /** The answer JSON of the entry in `slot`. */
  jsonAt (slot: number): string {
    const kept = this.recent.get(slot)
    if (kept !== undefined) return kept
    scratch.length = 0
    this.writeJson(slot, scratch)
    const json = scratch.text()
    this.recent.set(slot, json)
    if (this.recent.size > RECENT_MAX) this.recent.delete(this.recent.keys().next().value as number)
    return json
  }

  /**
   * Writes the answer JSON of the entry in `slot` as UTF-8: the one encoder of an entry. Its key
   * and a JSON value are copied as they are held (the value less the whitespace around it); only a
   * value not yet read, or not JSON, is made text.
   */
  writeJson (slot: number, w: ByteWriter): void {
    const known = this.known.pageOf(slot)
    const at = inPage(slot)
    // A value not yet read is read once; one that is not JSON is written as valueJson says.
    let notJson: string | undefined
    if (known[at] !== Known.json) {
      const read = valueJson(this.valueAt(slot), known[at] as Known)
      known[at] = read.known
      if (read.known !== Known.json) notJson = read.json
    }
    this.writeKeyAndFields(slot, w)
    if (notJson === undefined) {
      // Read in place in its slab: no view of the value is made (a JSON value is never empty).
      const places = this.places.pageOf(slot)
      const where = places[2 * at] as number
      const slab = this.slabs[where >>> SLAB_BITS] as Buffer
      let start = where & (SLAB - 1)
      let end = start + (places[2 * at + 1] as number)
      while (start < end && isJsonSpace(slab[start] as number)) start++
      while (end > start && isJsonSpace(slab[end - 1] as number)) end--
      const room = w.reserve(VALUE_HEAD.length + end - start)
      w.length = copyBytes(slab, start, end, room, copyBytes(VALUE_HEAD, 0, VALUE_HEAD.length, room, w.length))
    } else {
      w.byte(0x2c)
      w.utf8(notJson)
    }
    w.bytes(REVISION_HEAD)
    w.decimal(this.revisionAt(slot))
    w.bytes(UPDATED_HEAD)
    w.isoTime(this.updatedAt(slot))
    w.byte(QUOTE)
    w.byte(0x7d)
  }

  /**
   * `{"key":"<key>"` and the key's fields, in room reserved once, by byte loops over the key
   * table's slab: an answer writes its entries one after the other, and a call through the writer
   * a piece was most of an uncached answer's time (bench/RESULTS.md).
   */
  private writeKeyAndFields (slot: number, w: ByteWriter): void {
    const keys = this.keys
    const keySlab = keys.slabAt(slot)
    const keyStart = keys.offsetAt(slot)
    const keyEnd = keyStart + keys.lengthAt(slot)
    const buffer = w.reserve(ENTRY_FRAME + 2 * (keyEnd - keyStart) + ENTRY_HEADS_BYTES[this.what])
    let to = copyBytes(KEY_HEAD, 0, KEY_HEAD.length, buffer, w.length)
    to = copyBytes(keySlab, keyStart, keyEnd, buffer, to)
    buffer[to++] = QUOTE
    if (!TOKENS_ARE_FIELDS[this.what]) {
      w.length = to
      w.utf8(fieldsJson(this.what, fieldsOf(this.what, keys.keyAt(slot))))
      return
    }
    const heads = ENTRY_HEADS[this.what]
    let from = keyStart
    for (let i = 0; i < heads.length; i++) {
      let end = keyEnd
      if (i < heads.length - 1) for (end = from; end < keyEnd && keySlab[end] !== DOT; end++);
      const head = heads[i] as Buffer
      to = copyBytes(keySlab, from, end, buffer, copyBytes(head, 0, head.length, buffer, to))
      buffer[to++] = QUOTE
      from = end + 1
    }
    w.length = to
  }

  /** Room for a new slot at the end: a new page of the columns when the last one is full. */
  private grow (slot: number): void {
    this.revisions.grow(slot)
    this.seconds.grow(slot)
    this.nanos.grow(slot)
    this.places.grow(slot)
    this.known.grow(slot)
  }

  /**
   * The live values copied into fresh slabs, which drops what updates and deletions left behind (so
   * the slabs hold at most about twice the live bytes).
   */
  private compact (): void {
    const old = this.slabs
    this.slabs = []
    this.slab = -1
    this.end = SLAB
    this.heldBytes = 0
    for (let slot = 0; slot < this.keys.size; slot++) {
      const value = Entries.bytesAt(old, this.places.pageOf(slot), 2 * inPage(slot))
      if (value.length === 0) continue
      const known = this.known.pageOf(slot)[inPage(slot)] as Known
      this.place(slot, value)
      this.known.pageOf(slot)[inPage(slot)] = known
    }
  }
}

export function outOfShapeJson (key: string, revision: number, reason: string): string {
  return `{"key":${JSON.stringify(key)},"revision":${revision},"reason":${JSON.stringify(reason)}}`
}
