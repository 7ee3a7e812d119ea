import { expect, test } from 'vitest'
import { RecentlyUsed } from './recently-used.js'

const sized = (maxBytes: number, maxEntries: number) => new RecentlyUsed<{ v: string, bytes: number }>({ maxBytes, maxEntries, bytesOf: (value) => value.bytes })
const of = (v: string, bytes = 10) => ({ v, bytes })
const got = (cache: ReturnType<typeof sized>, keys: string[]) => keys.map((k) => cache.get(k, 'v')?.v)

test('answers only for what it was built from', () => {
  const cache = sized(100, 3)
  cache.set('q', 'v1', of('a'))
  expect(cache.get('q', 'v1')?.v).toBe('a')
  expect(cache.get('q', 'v2')).toBeUndefined()
  expect(cache.get('q', 'v1')).toBeUndefined()
  expect(cache.size).toBe(0)
})

test('lets the least recently used go first, by count and by the bytes its values hold', () => {
  const cache = sized(100, 3)
  for (const k of ['a', 'b', 'c']) cache.set(k, 'v', of(k))
  cache.get('a', 'v')
  cache.set('d', 'v', of('d'))
  expect(got(cache, ['a', 'b', 'c', 'd'])).toEqual(['a', undefined, 'c', 'd'])
  for (const k of ['e', 'f', 'g']) cache.set(k, 'v', of(k, 25))
  expect(cache.size).toBeLessThanOrEqual(3)
  expect(cache.bytes).toBeLessThanOrEqual(100)
  expect(cache.get('g', 'v')?.v).toBe('g')
  cache.set('huge', 'v', of('x', 26))
  expect(cache.get('huge', 'v')).toBeUndefined()
})

test('the key counts in the bytes when the owner says so', () => {
  const cache = new RecentlyUsed<string>({ maxBytes: 100, maxEntries: 100, bytesOf: (value, key) => value.length + key.length })
  for (let i = 0; i < 20; i++) cache.set(`key-${i}`, 'v', 'value')
  expect(cache.bytes).toBeLessThanOrEqual(100)
  expect(cache.size).toBe(9) // 11 bytes each: key-1x and its value
})

test('obtain makes a value only when none is kept for what it is asked for, and keeps what it makes for a key asked before', () => {
  const cache = new RecentlyUsed<string, number>({ maxBytes: 100, maxEntries: 3, bytesOf: (v) => v.length })
  let made = 0
  const make = (): string => `made ${++made}`
  expect(cache.obtain('q', 1, make)).toBe('made 1')
  expect(cache.size).toBe(0)
  expect(cache.obtain('q', 1, make)).toBe('made 2')
  expect(cache.obtain('q', 1, make)).toBe('made 2')
  // Made for another state: the key was asked before, so the new value is kept at once.
  expect(cache.obtain('q', 2, make)).toBe('made 3')
  expect(cache.get('q', 2)).toBe('made 3')
  expect(made).toBe(3)
})

test('a run of keys asked once keeps none of them and pushes out none of the keys asked again and again', () => {
  const cache = new RecentlyUsed<string, number>({ maxBytes: 1000, maxEntries: 3, bytesOf: (v) => v.length })
  for (let i = 0; i < 2; i++) cache.obtain('polled', 1, () => 'answer')
  for (let i = 0; i < 100; i++) cache.obtain(`once-${i}`, 1, () => `answer ${i}`)
  expect(cache.size).toBe(1)
  expect(cache.get('polled', 1)).toBe('answer')
})

test('a key asked again only after four times maxEntries other new keys is not known any more', () => {
  const cache = new RecentlyUsed<string, number>({ maxBytes: 1000, maxEntries: 3, bytesOf: (v) => v.length })
  cache.obtain('q', 1, () => 'a')
  for (let i = 0; i < 12; i++) cache.obtain(`other-${i}`, 1, () => 'b')
  cache.obtain('q', 1, () => 'a')
  expect(cache.get('q', 1)).toBeUndefined()
  cache.obtain('q', 1, () => 'a')
  expect(cache.get('q', 1)).toBe('a')
})

test('a key asked once passes for one asked before less than 1 in 16 times, whatever the window: its doorkeeper grows with maxEntries', () => {
  // A window of 12000 keys: a fixed 64K bits, as the doorkeeper first had, let 11 % of these through.
  const cache = new RecentlyUsed<string, number>({ maxBytes: 1e9, maxEntries: 3000, bytesOf: () => 1 })
  for (let i = 0; i < 10_000; i++) cache.obtain(`filled-${i}`, 1, () => 'a')
  const before = cache.size
  const probes = 2000
  for (let i = 0; i < probes; i++) cache.obtain(`probe-${i}`, 1, () => 'b')
  expect(cache.size - before).toBeLessThan(probes / 16)
})

test('a hit moves its key to the most recent, even right after another hit moved its own', () => {
  const cache = sized(100, 3)
  cache.set('a', 'v', of('a'))
  cache.set('b', 'v', of('b'))
  cache.get('a', 'v')
  cache.get('b', 'v')
  cache.set('c', 'v', of('c'))
  cache.set('d', 'v', of('d'))
  expect(got(cache, ['a', 'b', 'c', 'd'])).toEqual([undefined, 'b', 'c', 'd'])
})
