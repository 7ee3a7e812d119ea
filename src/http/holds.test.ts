import { expect, test } from 'vitest'
import { connectionBound, Pool, type EndedBy, type Hold } from './holds.js'

function pool (limit: number) {
  const p = new Pool(limit, 'HTTP_MAX_WAITS', 'waiting requests')
  const ended: string[] = []
  let n = 0
  const hold = (caller: string): Hold & { name: string } => {
    const name = `${caller}${++n}`
    return { caller, admitted: undefined, name, end: (_why: EndedBy) => { ended.push(name) } }
  }
  const take = (caller: string): string | undefined => {
    const h = hold(caller)
    return p.admit(h) === undefined ? h.name : undefined
  }
  return { p, ended, hold, take }
}

test('below the limit every request is held; at it, a caller at its share is refused', () => {
  const { p, take, ended } = pool(4)
  expect(['a', 'a', 'a', 'a'].map(take)).toEqual(['a1', 'a2', 'a3', 'a4'])
  expect(take('a')).toBeUndefined()
  expect(p.size).toBe(4)
  expect(ended).toEqual([])
})

test('a caller under its even share is held by ending the oldest hold of the caller holding most', () => {
  const { p, take, ended } = pool(4)
  for (let i = 0; i < 4; i++) take('a')
  expect(take('b')).toBe('b5')
  expect(ended).toEqual(['a1'])
  expect(take('b')).toBe('b6')
  expect(ended).toEqual(['a1', 'a2'])
  // Two callers, share 2 each: b is at its share now, and so is a.
  expect(take('b')).toBeUndefined()
  expect(take('a')).toBeUndefined()
  // A third caller's share is 1: it ends one of the two that hold 2.
  expect(take('c')).toBe('c9')
  expect(ended).toHaveLength(3)
  expect(p.size).toBe(4)
})

test('with more callers than room, one hold each: a newcomer is refused rather than end another\'s only hold', () => {
  const { take, ended } = pool(2)
  take('a')
  take('b')
  expect(take('c')).toBeUndefined()
  expect(ended).toEqual([])
})

test('a dry run judges without taking in or ending; a hold let go twice counts once', () => {
  const { p, take, hold, ended } = pool(2)
  const h = hold('a')
  p.admit(h)
  take('a')
  expect(p.admit(hold('b'), true)).toBeUndefined()
  expect(p.admit(hold('a'), true)?.code).toBe('NOT_READY')
  expect([p.size, ended]).toEqual([2, []])
  p.release(h)
  p.release(h)
  expect(p.size).toBe(1)
})

test.each([
  [1000, 1000, undefined, { maxConnections: 2256, maxStreams: 1000, maxWaits: 1000 }],
  [1000, 1000, 20_000, { maxConnections: 2256, maxStreams: 1000, maxWaits: 1000 }],
  [1000, 1000, 1024, { maxConnections: 960, maxStreams: 352, maxWaits: 352, lowered: { fileLimit: 1024 } }],
  [300, 100, 600, { maxConnections: 536, maxStreams: 210, maxWaits: 70, lowered: { fileLimit: 600 } }],
  [2, 2, 100, { maxConnections: 36, maxStreams: 1, maxWaits: 1, lowered: { fileLimit: 100 } }]
])('connections for %i streams and %i waits under a file limit of %s', (streams, waits, fileLimit, bound) => {
  const got = connectionBound(streams, waits, fileLimit)
  expect(got).toEqual(bound)
  expect(got.maxStreams + got.maxWaits).toBeLessThanOrEqual(Math.max(got.maxConnections - 256, 2))
})
