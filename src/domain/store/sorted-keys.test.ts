import { expect, test } from 'vitest'
import fc from 'fast-check'
import { KeyUnion, SortedKeys, SortedSlots } from './sorted-keys.js'

test('keeps keys in code-unit order without repeats, whatever the order of changes', () => {
  fc.assert(fc.property(fc.array(fc.tuple(fc.boolean(), fc.string({ maxLength: 4 }))), (ops) => {
    const set = new SortedKeys()
    const model = new Set<string>()
    for (const [add, key] of ops) {
      if (add) { set.add(key); model.add(key) } else { set.delete(key); model.delete(key) }
    }
    const expected = [...model].sort()
    expect(Array.from({ length: set.size }, (_, i) => set.at(i))).toEqual(expected)
    for (const probe of ['', 'a', 'b', 'zz']) {
      expect(set.upperBound(probe)).toBe(expected.filter((k) => k <= probe).length)
      expect([...set.between(probe, undefined)]).toEqual(expected.filter((k) => k >= probe))
      expect([...set.between(`${probe}.`, `${probe}/`)]).toEqual(expected.filter((k) => k.startsWith(`${probe}.`)))
    }
  }))
})

test('a set of slots keeps its keys in code-unit order without repeats, whatever the order of changes', () => {
  fc.assert(fc.property(fc.array(fc.tuple(fc.boolean(), fc.string({ maxLength: 4 }))), (ops) => {
    // Slots as a keyed structure gives them: one a key, for good.
    const slotOf = new Map<string, number>()
    const keys: string[] = []
    const keyAt = (slot: number): string => keys[slot] as string
    const set = new SortedSlots({ keyAt, compareAt: (slot, key) => keyAt(slot) < key ? -1 : keyAt(slot) > key ? 1 : 0 })
    const model = new Set<string>()
    for (const [add, key] of ops) {
      if (!slotOf.has(key)) slotOf.set(key, keys.push(key) - 1)
      if (add) { set.add(key, slotOf.get(key) as number); model.add(key) } else { set.delete(key); model.delete(key) }
    }
    const expected = [...model].sort()
    expect(Array.from({ length: set.size }, (_, i) => keyAt(set.slotAt(i)))).toEqual(expected)
    for (const probe of ['', 'a', 'b', 'zz']) {
      expect(set.upperBound(probe)).toBe(expected.filter((k) => k <= probe).length)
    }
  }))
})

test('a union of disjoint sets reads as one set in key order, from the start, from an upperBound and backwards', () => {
  fc.assert(fc.property(fc.uniqueArray(fc.string({ maxLength: 3 }), { maxLength: 20 }), fc.array(fc.nat(2), { maxLength: 20 }), fc.string({ maxLength: 2 }), (keys, parts, probe) => {
    const keysBySlot = { keyAt: (slot: number): string => keys[slot] as string, compareAt: (slot: number, key: string) => (keys[slot] as string) < key ? -1 : (keys[slot] as string) > key ? 1 : 0 }
    const sets = [0, 1, 2].map(() => new SortedSlots(keysBySlot))
    keys.forEach((key, slot) => sets[parts[slot] ?? 0]?.add(key, slot))
    const union = new KeyUnion(keysBySlot, sets, 0)
    const expected = [...keys].sort()
    const read = (from: number): string[] => Array.from({ length: union.size - from }, (_, i) => keysBySlot.keyAt(union.slotAt(from + i)))
    expect(read(0)).toEqual(expected)
    const start = union.upperBound(probe)
    expect(start).toBe(expected.filter((k) => k <= probe).length)
    expect(read(start)).toEqual(expected.slice(start))
    expect(Array.from({ length: union.size }, (_, i) => keysBySlot.keyAt(union.slotAt(union.size - 1 - i)))).toEqual([...expected].reverse())
  }))
})
