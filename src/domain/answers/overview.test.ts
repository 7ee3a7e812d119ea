import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { Contents } from '../store/contents.js'
import type { OverviewQuery } from '../wire/request.js'
import { createOverviews, isoNanos, stateOf } from './overview.js'
import type { AnsweredViews } from './port.js'

const at = (ms: number, nanos = 0) => ({ ms, nanos })

describe('stateOf', () => {
  test.each([
    ['needs and nothing applied', at(5), undefined, 'unapplied'],
    ['a need written after the applied entry', at(5, 1), at(5), 'pending'],
    ['a need written at the same instant as the applied entry', at(5, 7), at(5, 7), 'applied'],
    ['needs written before the applied entry', at(4, 999999), at(5), 'applied'],
    ['applied and no needs', undefined, at(5), 'orphaned'],
    ['neither', undefined, undefined, undefined]
  ] as const)('%s: %s', (_, needs, applied, state) => {
    expect(stateOf(needs, applied)).toBe(state)
  })
})

test('isoNanos keeps the nanoseconds NATS gives', () => {
  expect(isoNanos(at(Date.UTC(2026, 10, 29, 9, 40, 0, 123), 456789))).toBe('2026-11-29T09:40:00.123456789Z')
  expect(isoNanos(at(0, 1))).toBe('1970-01-01T00:00:00.000000001Z')
  expect(isoNanos(at(Date.UTC(2026, 10, 29, 9, 40, 0, 999), 999999))).toBe('2026-11-29T09:40:00.999999999Z')
  expect(isoNanos(at(Date.UTC(2026, 10, 29, 9, 40, 1, 0), 0))).toBe('2026-11-29T09:40:01.000000000Z')
})

describe('answers kept across changes', () => {
  const CREATED = '2026-11-29T09:40:00.123456789Z'
  const value = new TextEncoder().encode('{}')
  const nodes = ['a', 'b', 'c']
  const modules = ['m1', 'm2']
  const key = fc.record({
    what: fc.constantFrom('needs' as const, 'applied' as const, 'collect' as const),
    node: fc.constantFrom(...nodes),
    module: fc.constantFrom(...modules),
    name: fc.constantFrom('x', 'y'),
    odd: fc.boolean()
  }).map(({ what, node, module, name, odd }) => ({ what, key: odd ? `${node}.odd` : what === 'needs' ? `${node}.${module}.port.${name}` : what === 'applied' ? `${node}.${module}` : `${node}.${module}.${name}` }))
  const change = fc.record({ at: key, operation: fc.constantFrom('PUT' as const, 'PUT' as const, 'DEL' as const), ms: fc.integer({ min: 0, max: 5 }) })
  const questions: OverviewQuery[] = [
    { what: 'nodes', filter: {} },
    { what: 'nodes', filter: { node: ['b'] } },
    { what: 'modules', filter: {} },
    { what: 'modules', filter: { state: ['pending'] } },
    { what: 'modules', filter: { node: ['a', 'c'], module: ['m2'] } }
  ]

  test('an overview asked again after each batch of changes answers what a new one does', () => {
    fc.assert(fc.property(fc.array(fc.array(change, { maxLength: 6 }), { minLength: 1, maxLength: 8 }), (batches) => {
      const contents = { needs: new Contents('needs', CREATED), applied: new Contents('applied', CREATED), collect: new Contents('collect', CREATED) }
      for (const c of Object.values(contents)) c.buildIndexes()
      const views = { byWhat: Object.fromEntries(Object.entries(contents).map(([what, c]) => [what, { read: () => c, stale: false }])) } as unknown as AnsweredViews
      const kept = createOverviews(views)
      let revision = 0
      for (const batch of batches) {
        for (const { at, operation, ms } of batch) contents[at.what].apply({ key: at.key, value, revision: ++revision, operation, created: new Date(Date.UTC(2026, 10, 29) + ms), nanos: 0 })
        const fresh = createOverviews(views)
        for (const q of questions) expect(kept.ask(q).json, JSON.stringify(q)).toBe(fresh.ask(q).json)
        for (const node of nodes) expect(attempt(() => kept.node(node).json)).toBe(attempt(() => fresh.node(node).json))
      }
    }), { numRuns: 100 })
  })
})

const attempt = (f: () => string): string => {
  try {
    return f()
  } catch (err) {
    return (err as Error).message
  }
}
