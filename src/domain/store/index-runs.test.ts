import { expect, test } from 'vitest'
import fc from 'fast-check'
import { indexValue, PrefixRuns, SetRuns } from './index-runs.js'

const keysOf = (keys: string[]) => ({ keyAt: (slot: number) => keys[slot] as string, compareAt: (slot: number, key: string) => (keys[slot] as string) < key ? -1 : (keys[slot] as string) > key ? 1 : 0 })

// Keys in order, each with a revision: what one pass gives every index must be what each value's keys say.
const sortedKeys = fc.uniqueArray(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.constantFrom('x', 'y'), fc.constantFrom('1', '2', '3')).map((t) => t.join('.')))
  .map((keys) => keys.sort().map((key, slot) => ({ key, slot, revision: 1 + ((slot * 7) % 11) })))

test.each([[[0]], [[1]], [[2]], [[0, 1]], [[0, 2]]])('a set index at %j holds each value\'s keys in order with their latest revision', (positions) => {
  fc.assert(fc.property(sortedKeys, (keys) => {
    const runs = new SetRuns(positions)
    keys.forEach((k, at) => { runs.add(k.key.split('.'), at, k.revision) })
    const sets = runs.done(keysOf(keys.map((k) => k.key)), Int32Array.from(keys, (k) => k.slot))
    const expected = new Map<string, { keys: string[], revision: number }>()
    for (const k of keys) {
      const value = indexValue(k.key.split('.'), positions)
      const e = expected.get(value) ?? { keys: [], revision: 0 }
      expected.set(value, { keys: [...e.keys, k.key], revision: Math.max(e.revision, k.revision) })
    }
    expect(new Map([...sets].map(([value, set]) => [value, { keys: Array.from({ length: set.size }, (_, i) => keys[set.slotAt(i)]?.key), revision: set.revision }]))).toEqual(expected)
  }))
})

test.each([[[0]], [[0, 1]]])('a prefix index at %j holds each value\'s latest revision', (positions) => {
  fc.assert(fc.property(sortedKeys, (keys) => {
    const runs = new PrefixRuns(positions)
    keys.forEach((k, at) => { runs.add(k.key.split('.'), at, k.revision) })
    const expected = new Map<string, number>()
    for (const k of keys) {
      const value = indexValue(k.key.split('.'), positions)
      expected.set(value, Math.max(expected.get(value) ?? 0, k.revision))
    }
    expect(runs.done()).toEqual(expected)
  }))
})

test('a set index given places with gaps holds only the keys it was given: a run never spans a place it was not told of', () => {
  const keys = ['a.x.1', 'a.x.2', 'a.x.3', 'a.y.1'].map((key, slot) => ({ key, slot }))
  const runs = new SetRuns([0])
  for (const at of [0, 2, 3]) runs.add((keys[at] as { key: string }).key.split('.'), at, 1)
  const set = runs.done(keysOf(keys.map((k) => k.key)), Int32Array.from(keys, (k) => k.slot)).get('a')
  expect(Array.from({ length: set?.size ?? 0 }, (_, i) => set?.slotAt(i))).toEqual([0, 2, 3])
})
