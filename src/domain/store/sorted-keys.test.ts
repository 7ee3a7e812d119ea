import { expect, test } from 'vitest'
import fc from 'fast-check'
import { SortedKeys, SortedSlots } from './sorted-keys.js'

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
