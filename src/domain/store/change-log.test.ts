import fc from 'fast-check'
import { expect, test } from 'vitest'
import { ChangeLog } from './change-log.js'

test('since gives each key changed after a revision once, at its latest change, in revision order, compacted or not', () => {
  fc.assert(fc.property(fc.array(fc.constantFrom(0, 1, 2, 3, 4), { maxLength: 60 }), fc.nat(60), fc.boolean(), (writes, from, compact) => {
    const log = new ChangeLog(0)
    const latest = new Map<number, number>()
    writes.forEach((key, i) => {
      log.record(key, i + 1)
      latest.set(key, i + 1)
    })
    const current = (key: number): number | undefined => latest.get(key)
    if (compact) log.compact(0, current)
    const expected = [...latest].filter(([, rev]) => rev > from).sort(([, a], [, b]) => a - b)
    expect([...log.since(from, current)]).toEqual(expected)
  }))
})

test('compaction keeps one record a live key once superseded records outnumber the live ones', () => {
  const log = new ChangeLog(10)
  for (let i = 1; i <= 10_000; i++) log.record(7, i)
  log.compact(1, (key) => key === 7 ? 10_000 : undefined)
  expect(log.size).toBe(1)
  expect([...log.since(0, () => 10_000)]).toEqual([[7, 10_000]])
  log.record(7, 10_001)
  log.compact(1, () => 10_001)
  expect(log.size).toBe(2)
})

test('a log past a page of records reads and compacts the same', () => {
  const log = new ChangeLog(0)
  const latest = new Map<number, number>()
  for (let i = 1; i <= 30_000; i++) {
    const key = (i * 7919) % 12_000
    log.record(key, i)
    latest.set(key, i)
  }
  const current = (key: number): number | undefined => latest.get(key)
  const expected = (from: number): Array<[number, number]> => [...latest].filter(([, rev]) => rev > from).sort(([, a], [, b]) => a - b)
  for (const compact of [false, true]) {
    if (compact) log.compact(0, current)
    for (const from of [0, 8191, 8192, 20_000, 30_000]) expect([...log.since(from, current)]).toEqual(expected(from))
  }
  expect(log.size).toBe(12_000)
})

test('revisions past 32 bits are kept exact, in the middle of a page', () => {
  const log = new ChangeLog(0)
  const revisions = [2 ** 32 - 2, 2 ** 32 - 1, 2 ** 32 + 5, 2 ** 53 - 1]
  revisions.forEach((revision, key) => { log.record(key, revision) })
  const current = (key: number): number | undefined => revisions[key]
  expect([...log.since(2 ** 32 - 2, current)]).toEqual([[1, 2 ** 32 - 1], [2, 2 ** 32 + 5], [3, 2 ** 53 - 1]])
  log.compact(0, current)
  expect([...log.since(0, current)]).toEqual(revisions.map((revision, key) => [key, revision]))
})
