// Keys numbered by slot, held as bytes: an in-shape key is ASCII (its tokens are [A-Za-z0-9_-/=]), so
// a byte a character, and the keys' byte order is their code-unit order. At 300k keys a key string
// and its `Map` entry were ~100 bytes; here a key costs its bytes, 8 bytes of place and its share of
// an open-addressing table of slots and their keys' hashes (~55 bytes in all).

import { sortByBytes } from './byte-sort.js'
import { inPage, PAGE, PagedColumn } from './paged-column.js'

/** Keys' bytes come in slabs that stay put; a key never spans two. */
const SLAB_BITS = 16
const SLAB = 1 << SLAB_BITS
const EMPTY = -1
/** The table grows past this share of its cells in use: linear probing stays short below it. */
const MAX_LOAD = 0.7

/**
 * The cell a hash starts at, in a table of any size: a load of a known count sizes the table to
 * it, where the next power of two held up to twice the cells (at 3M keys, 16 MB more: 5 bytes an
 * entry, bench/RESULTS.md).
 */
const cellOf = (hash: number, size: number): number => (hash >>> 1) % size

/** FNV-1a of a key's code units. */
export function hashOf (key: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193)
  return h >>> 0
}

/** FNV-1a of a key's bytes: `hashOf` of its string, for an ASCII key. */
function hashOfBytes (key: Uint8Array): number {
  let h = 0x811c9dc5
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ (key[i] as number), 0x01000193)
  return h >>> 0
}

function notAKey (key: string | Uint8Array): Error {
  const named = typeof key === 'string' ? key : Buffer.from(key).toString('latin1')
  return new Error(`a key table holds keys of ASCII characters up to ${SLAB} long: ${JSON.stringify(named)}`)
}

export class KeyTable {
  private readonly slabs: Buffer[] = []
  private end = SLAB
  /** Per slot: where its key starts (slab × SLAB + offset) and its length, two numbers a slot. */
  private readonly places = new PagedColumn(() => new Uint32Array(2 * PAGE))
  private count = 0
  /**
   * Cells of two numbers, a slot (EMPTY when free) and its key's hash, at the hash and the cells
   * after it. A probe compares the hashes before the keys: keys of one mesh share their length
   * and long prefixes, and reading every key a probe passed was 1.0 s of a 3M-key load's 1.1 s of
   * lookups (bench/RESULTS.md).
   */
  private cells = new Int32Array(2 * 1024).fill(EMPTY)

  /** How many cells the table has. */
  private get capacity (): number {
    return this.cells.length / 2
  }

  get size (): number {
    return this.count
  }

  /** The key last looked up (its string or its bytes) and its hash: a key not found is most often added next. */
  private looked: string | Uint8Array | undefined
  private lookedHash = 0

  /**
   * The slot of `key`, or undefined when it was never added. The key is its string, or the bytes of
   * an ASCII key: a load reads its keys so, and makes no string of them.
   */
  slotOf (key: string | Uint8Array): number | undefined {
    const cells = this.cells
    const named = typeof key === 'string'
    const hash = named ? hashOf(key) : hashOfBytes(key)
    const tag = hash | 0
    this.looked = key
    this.lookedHash = hash
    for (let i = 2 * cellOf(hash, cells.length / 2); ; i = i + 2 === cells.length ? 0 : i + 2) {
      const slot = cells[i] as number
      if (slot === EMPTY) return undefined
      if (cells[i + 1] === tag && (named ? this.equals(slot, key) : this.equalsBytes(slot, key))) return slot
    }
  }

  /**
   * Makes room for `keys` keys in all, so that a load of a bucket of known size adds them with no
   * table grown and every key placed again on the way (3 % of a 3M-key load).
   */
  reserve (keys: number): void {
    const size = Math.ceil(keys / MAX_LOAD) + 1
    if (size > this.capacity) this.rehash(size)
  }

  /** Adds a key not added yet, of ASCII characters alone; its slot is the next number. */
  add (key: string): number {
    const slab = this.room(key)
    // Written by a loop into the slab's free room before anything is counted, checking that each
    // character is ASCII (a byte a character): a call into the encoder and a measure of the UTF-8
    // length cost more for a key of a few dozen.
    for (let i = 0, to = this.end; i < key.length; i++, to++) {
      const c = key.charCodeAt(i)
      if (c > 0x7f) throw notAKey(key)
      slab[to] = c
    }
    return this.placeNew(key.length, key === this.looked ? this.lookedHash : hashOf(key))
  }

  /** `add` for a key given as its bytes, which are ASCII: its caller checked them (the key's shape allows nothing else). */
  addBytes (key: Uint8Array): number {
    this.room(key).set(key, this.end)
    const hash = key === this.looked ? this.lookedHash : hashOfBytes(key)
    // Not kept: the bytes are a view of the read buffer they came in, which would stay held with them.
    this.looked = undefined
    return this.placeNew(key.length, hash)
  }

  /** The slab with room at `end` for `key` (a byte a character), and room in the table for one more slot. */
  private room (key: string | Uint8Array): Buffer {
    const length = key.length
    if (length > SLAB) throw notAKey(key)
    if (this.count + 1 > this.capacity * MAX_LOAD) this.rehash(this.capacity * 2)
    if (this.slabs.length === 0 || this.end + length > SLAB) {
      this.slabs.push(Buffer.allocUnsafeSlow(SLAB))
      this.end = 0
    }
    return this.slabs[this.slabs.length - 1] as Buffer
  }

  /** Numbers the key just written at `end` in the last slab, and places its slot in the table. */
  private placeNew (length: number, hash: number): number {
    const slot = this.count++
    this.places.grow(slot)
    const places = this.places.pageOf(slot)
    const at = 2 * inPage(slot)
    places[at] = (this.slabs.length - 1) * SLAB + this.end
    places[at + 1] = length
    this.end += length
    this.place(slot, hash)
    return slot
  }

  readonly keyAt = (slot: number): string => {
    const places = this.places.pageOf(slot)
    const at = 2 * inPage(slot)
    const start = places[at] as number
    const offset = start & (SLAB - 1)
    return (this.slabs[start >>> SLAB_BITS] as Buffer).toString('latin1', offset, offset + (places[at + 1] as number))
  }

  /** The length of the key in `slot` (a byte a character). */
  lengthAt (slot: number): number {
    return this.places.pageOf(slot)[2 * inPage(slot) + 1] as number
  }

  /** The slab that holds the key in `slot` (its bytes are at `offsetAt` for `lengthAt`). */
  slabAt (slot: number): Buffer {
    return this.slabs[(this.places.pageOf(slot)[2 * inPage(slot)] as number) >>> SLAB_BITS] as Buffer
  }

  /** Where the key in `slot` starts in its slab. */
  offsetAt (slot: number): number {
    return (this.places.pageOf(slot)[2 * inPage(slot)] as number) & (SLAB - 1)
  }

  /** The sign of the key in `slot` against `key` in code-unit order, without making its string. */
  readonly compareAt = (slot: number, key: string): number => {
    const places = this.places.pageOf(slot)
    const at = 2 * inPage(slot)
    const start = places[at] as number
    const length = places[at + 1] as number
    const slab = this.slabs[start >>> SLAB_BITS] as Buffer
    const offset = start & (SLAB - 1)
    const n = Math.min(length, key.length)
    for (let i = 0; i < n; i++) {
      const d = (slab[offset + i] as number) - key.charCodeAt(i)
      if (d !== 0) return d
    }
    return length - key.length
  }

  /** Whether the key in `slot` starts with `prefix`, without making its string. */
  startsWithAt (slot: number, prefix: string): boolean {
    const places = this.places.pageOf(slot)
    const at = 2 * inPage(slot)
    if ((places[at + 1] as number) < prefix.length) return false
    const start = places[at] as number
    const slab = this.slabs[start >>> SLAB_BITS] as Buffer
    const offset = start & (SLAB - 1)
    for (let i = 0; i < prefix.length; i++) if (slab[offset + i] !== prefix.charCodeAt(i)) return false
    return true
  }

  /**
   * The slots `wanted` takes, in their keys' code-unit order (KeyOrder): sorted as bytes where they
   * are (byte-sort.ts), with no string made.
   */
  sorted (wanted: (slot: number) => boolean): KeyOrder {
    const all = new Int32Array(this.count)
    let m = 0
    for (let slot = 0; slot < this.count; slot++) if (wanted(slot)) all[m++] = slot
    const slots = all.subarray(0, m)
    const slabOf = new Int32Array(m)
    const starts = new Int32Array(m)
    const lengths = new Int32Array(m)
    const order = new Int32Array(m)
    for (let k = 0; k < m; k++) {
      const slot = slots[k] as number
      const places = this.places.pageOf(slot)
      const at = 2 * inPage(slot)
      const start = places[at] as number
      slabOf[k] = start >>> SLAB_BITS
      starts[k] = start & (SLAB - 1)
      lengths[k] = places[at + 1] as number
      order[k] = k
    }
    // Each key's place copied into flat arrays (12 bytes a key while the sort runs): the sort reads
    // it at every word it takes, where the paged places cost a page lookup each. Sorted as their
    // places in `slots`, then named by their slots.
    sortByBytes(order, { bytes: this.slabs, slabOf, starts, lengths })
    for (let i = 0; i < m; i++) order[i] = slots[order[i] as number] as number
    return new KeyOrder(this, order)
  }

  private equals (slot: number, key: string): boolean {
    return this.places.pageOf(slot)[2 * inPage(slot) + 1] === key.length && this.compareAt(slot, key) === 0
  }

  private equalsBytes (slot: number, key: Uint8Array): boolean {
    const places = this.places.pageOf(slot)
    const at = 2 * inPage(slot)
    if (places[at + 1] !== key.length) return false
    const start = places[at] as number
    const slab = this.slabs[start >>> SLAB_BITS] as Buffer
    const offset = start & (SLAB - 1)
    for (let i = 0; i < key.length; i++) if (slab[offset + i] !== key[i]) return false
    return true
  }

  private place (slot: number, hash: number): void {
    const cells = this.cells
    let i = 2 * cellOf(hash, cells.length / 2)
    while (cells[i] !== EMPTY) i = i + 2 === cells.length ? 0 : i + 2
    cells[i] = slot
    cells[i + 1] = hash | 0
  }

  /** The table at `size` cells, every slot placed again by the hash its cell kept. */
  private rehash (size: number): void {
    const old = this.cells
    this.cells = new Int32Array(2 * size).fill(EMPTY)
    for (let i = 0; i < old.length; i += 2) {
      const slot = old[i] as number
      if (slot !== EMPTY) this.place(slot, (old[i + 1] as number) >>> 0)
    }
  }
}

/** Slots in their keys' code-unit order, as `KeyTable.sorted` gives them. */
export class KeyOrder {
  /** The slots in order: the caller may take them over. */
  constructor (private readonly table: KeyTable, readonly slots: Int32Array) {}

  get size (): number {
    return this.slots.length
  }

  /** The slot of the key at `i` in the order. */
  slotAt (i: number): number {
    return this.slots[i] as number
  }

  /** The key at `i` in the order. */
  keyAt (i: number): string {
    return this.table.keyAt(this.slotAt(i))
  }

  /** Whether the key at `i` starts with `prefix`. */
  startsWith (i: number, prefix: string): boolean {
    return this.table.startsWithAt(this.slotAt(i), prefix)
  }

  /** The keys in order. */
  keys (): string[] {
    return Array.from({ length: this.size }, (_, i) => this.keyAt(i))
  }
}
