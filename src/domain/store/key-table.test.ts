import fc from 'fast-check'
import { expect, test, vi } from 'vitest'
import { KeyTable } from './key-table.js'

const sign = (n: number): number => Math.sign(n)

test('numbers keys in the order added, finds each by its string, reads it back and compares it in code-unit order', () => {
  const ascii = fc.string({ unit: fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)), maxLength: 6 })
  fc.assert(fc.property(fc.array(ascii, { maxLength: 200 }), fc.array(ascii, { maxLength: 20 }), (keys, probes) => {
    const table = new KeyTable()
    const model = new Map<string, number>()
    for (const key of keys) {
      if (!model.has(key)) model.set(key, table.add(key))
      expect(table.slotOf(key)).toBe(model.get(key))
    }
    expect(table.size).toBe(model.size)
    expect([...model.values()]).toEqual([...model.keys()].map((_, i) => i))
    for (const [key, slot] of model) {
      expect(table.keyAt(slot)).toBe(key)
      for (const probe of [...probes, ...keys.slice(0, 5)]) {
        expect(sign(table.compareAt(slot, probe))).toBe(key < probe ? -1 : key > probe ? 1 : 0)
      }
    }
    for (const probe of probes) expect(table.slotOf(probe)).toBe(model.get(probe))
  }))
})

test('a key given as its bytes is the key given as its string: the same slot, found either way', () => {
  const ascii = fc.string({ unit: fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)), maxLength: 6 })
  fc.assert(fc.property(fc.array(fc.tuple(ascii, fc.boolean()), { maxLength: 200 }), (keys) => {
    const table = new KeyTable()
    const model = new Map<string, number>()
    for (const [key, asBytes] of keys) {
      const bytes = Buffer.from(key, 'latin1')
      const found = asBytes ? table.slotOf(bytes) : table.slotOf(key)
      expect(found).toBe(model.get(key))
      if (found === undefined) model.set(key, asBytes ? table.addBytes(bytes) : table.add(key))
    }
    for (const [key, slot] of model) {
      expect(table.slotOf(key)).toBe(slot)
      expect(table.slotOf(Buffer.from(key, 'latin1'))).toBe(slot)
      expect(table.keyAt(slot)).toBe(key)
    }
  }))
})

test('holds keys past its first table, a page of places and a slab of bytes', () => {
  const table = new KeyTable()
  const key = (i: number): string => `node-${i}.module-${i % 20}.secret.${'x'.repeat(i % 40)}`
  for (let i = 0; i < 20_000; i++) expect(table.add(key(i))).toBe(i)
  for (let i = 0; i < 20_000; i++) {
    expect(table.slotOf(key(i))).toBe(i)
    expect(table.keyAt(i)).toBe(key(i))
  }
  expect(table.slotOf('node-20000.module-0.secret.')).toBeUndefined()
})

test('refuses a key that is not ASCII: its bytes would not be its characters', () => {
  expect(() => new KeyTable().add('n\u00e9.a')).toThrow(/ASCII/)
})

test('sorted gives the keys wanted in code-unit order with their slots, and whether each starts with a prefix', () => {
  const token = fc.string({ unit: fc.constantFrom('a', 'b', 'A', '0', '-', '/', '=', '_', '.'), maxLength: 5 })
  fc.assert(fc.property(fc.uniqueArray(token, { maxLength: 100 }), fc.integer({ min: 1, max: 3 }), (keys, every) => {
    const table = new KeyTable()
    for (const key of keys) table.add(key)
    const wanted = (slot: number): boolean => slot % every === 0
    const expected = keys.filter((_, slot) => wanted(slot)).sort()
    const order = table.sorted(wanted)
    expect(order.keys()).toEqual(expected)
    expect(Array.from({ length: order.size }, (_, i) => order.slotAt(i))).toEqual(expected.map((key) => table.slotOf(key)))
    expected.forEach((key, i) => {
      expect(order.startsWith(i, key)).toBe(true)
      expect(order.startsWith(i, `${key}.`)).toBe(false)
      // Against the other keys as prefixes, of every length: as the key's string would say.
      for (const other of expected) expect(order.startsWith(i, other)).toBe(key.startsWith(other))
    })
  }))
  const table = new KeyTable()
  for (let i = 0; i < 70_000; i++) table.add(`k${(i * 7919) % 70_000}`)
  const order = table.sorted(() => true)
  const keys = order.keys()
  expect(keys).toEqual([...keys].sort())
  // Slots past 65535, their keys in many slabs.
  expect(Array.from({ length: order.size }, (_, i) => table.keyAt(order.slotAt(i)))).toEqual(keys)
})

test('reserve makes room beforehand, and no more: as many keys as reserved are added with no table grown, and all are found', () => {
  const table = new KeyTable()
  const rehash = vi.spyOn(table as unknown as { rehash: (size: number) => void }, 'rehash')
  table.reserve(6000)
  table.reserve(10)
  expect(rehash).toHaveBeenCalledTimes(1)
  // Cells for the keys at the table's most load (0.7), not the next power of two (16384).
  expect((table as unknown as { capacity: number }).capacity).toBeLessThanOrEqual(Math.ceil(6000 / 0.7) + 1)
  const keys = Array.from({ length: 6000 }, (_, i) => `n${i % 97}.m${i}`)
  keys.forEach((key, i) => expect(table.add(key)).toBe(i))
  expect(rehash).toHaveBeenCalledTimes(1)
  keys.forEach((key, i) => expect(table.slotOf(key)).toBe(i))
  expect(table.slotOf('n1.nothing')).toBeUndefined()
})

test('a key refused leaves the table as it was', () => {
  const table = new KeyTable()
  table.add('a.b')
  expect(() => table.add('a.\u00e9')).toThrow(/ASCII/)
  // Longer than a slab, as a string or as bytes: refused by name.
  expect(() => table.add('x'.repeat(65_537))).toThrow(/up to 65536 long: "x{65537}"/)
  expect(() => table.addBytes(Buffer.alloc(65_537, 'y'))).toThrow(/up to 65536 long: "y{65537}"/)
  expect([table.size, table.slotOf('a.b'), table.add('c.d'), table.keyAt(1)]).toEqual([1, 0, 1, 'c.d'])
})
