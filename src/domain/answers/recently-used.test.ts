import { expect, test } from 'vitest'
import { RecentlyUsed } from './recently-used.js'

test('answers only for the version it was built from', () => {
  const cache = new RecentlyUsed<string>()
  cache.set('q', 'v1', 'a', 1)
  expect(cache.get('q', 'v1')).toBe('a')
  expect(cache.get('q', 'v2')).toBeUndefined()
  expect(cache.get('q', 'v1')).toBeUndefined()
  expect(cache.size).toBe(0)
})

test('lets the least recently used go first, by count and by bytes', () => {
  const cache = new RecentlyUsed<string>(100, 3)
  for (const k of ['a', 'b', 'c']) cache.set(k, 'v', k, 10)
  cache.get('a', 'v')
  cache.set('d', 'v', 'd', 10)
  expect(['a', 'b', 'c', 'd'].map((k) => cache.get(k, 'v'))).toEqual(['a', undefined, 'c', 'd'])
  cache.set('e', 'v', 'e', 25)
  cache.set('f', 'v', 'f', 25)
  cache.set('g', 'v', 'g', 25)
  expect(cache.size).toBeLessThanOrEqual(3)
  expect(cache.get('g', 'v')).toBe('g')
  cache.set('huge', 'v', 'x', 26)
  expect(cache.get('huge', 'v')).toBeUndefined()
})

test('obtain makes a value only when none is kept for the version, and keeps what it makes', () => {
  const cache = new RecentlyUsed<string, number>(100, 3)
  let made = 0
  const make = (): string => `made ${++made}`
  expect(cache.obtain('q', 1, make, (v) => v.length)).toBe('made 1')
  expect(cache.obtain('q', 1, make, (v) => v.length)).toBe('made 1')
  expect(cache.obtain('q', 2, make, (v) => v.length)).toBe('made 2')
  expect(cache.get('q', 2)).toBe('made 2')
  expect(made).toBe(2)
})

test('a hit moves its key to the most recent, even right after another hit moved its own', () => {
  const cache = new RecentlyUsed<string>(100, 3)
  cache.set('a', 'v', 'a', 10)
  cache.set('b', 'v', 'b', 10)
  cache.get('a', 'v')
  cache.get('b', 'v')
  cache.set('c', 'v', 'c', 10)
  cache.set('d', 'v', 'd', 10)
  expect(['a', 'b', 'c', 'd'].map((k) => cache.get(k, 'v'))).toEqual([undefined, 'b', 'c', 'd'])
})
