import fc from 'fast-check'
import { expect, test } from 'vitest'
import { ChangeLog } from './change-log.js'

test('since gives each key changed after a revision once, at its latest change, in revision order, compacted or not', () => {
  fc.assert(fc.property(fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { maxLength: 60 }), fc.nat(60), fc.boolean(), (writes, from, compact) => {
    const log = new ChangeLog(0)
    const latest = new Map<string, number>()
    writes.forEach((key, i) => {
      log.record(key, i + 1)
      latest.set(key, i + 1)
    })
    const current = (key: string): number | undefined => latest.get(key)
    if (compact) log.compact(0, current)
    const expected = [...latest].filter(([, rev]) => rev > from).sort(([, a], [, b]) => a - b)
    expect([...log.since(from, current)]).toEqual(expected)
  }))
})

test('compaction keeps one record a live key once superseded records outnumber the live ones', () => {
  const log = new ChangeLog(10)
  for (let i = 1; i <= 10_000; i++) log.record('k', i)
  log.compact(1, (key) => key === 'k' ? 10_000 : undefined)
  expect(log.size).toBe(1)
  log.record('k', 10_001)
  log.compact(1, () => 10_001)
  expect(log.size).toBe(2)
})
