import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { Contents } from '../store/contents.js'
import type { OverviewRequest } from '../wire/request.js'
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
    what: fc.constantFrom('needs' as const, 'needs' as const, 'applied' as const, 'collect' as const, 'registry' as const),
    node: fc.constantFrom(...nodes),
    module: fc.constantFrom(...modules),
    kind: fc.constantFrom('port', 'secret'),
    name: fc.constantFrom('x', 'y'),
    odd: fc.boolean()
  }).map(({ what, node, module, kind, name, odd }) => ({
    what,
    key: what === 'registry' ? kind : odd ? `${node}.odd` : what === 'needs' ? `${node}.${module}.${kind}.${name}` : what === 'applied' ? `${node}.${module}` : `${node}.${module}.${name}`
  }))
  const change = fc.record({ at: key, operation: fc.constantFrom('PUT' as const, 'PUT' as const, 'DEL' as const), ms: fc.integer({ min: 0, max: 5 }), nanos: fc.integer({ min: 0, max: 2 }) })
  const requests: OverviewRequest[] = [
    { what: 'nodes', filter: {} },
    { what: 'nodes', filter: { node: ['b'] } },
    { what: 'modules', filter: {} },
    { what: 'modules', filter: { state: ['pending'] } },
    { what: 'modules', filter: { state: ['applied', 'pending'] } },
    { what: 'modules', filter: { node: ['a', 'b'], state: ['pending', 'applied', 'pending'] } },
    { what: 'modules', filter: { node: ['a', 'c'], module: ['m2'] } },
    { what: 'modules', filter: { module: ['m1'], state: ['unapplied', 'orphaned'] } }
  ]

  test('an overview asked again after each batch of changes answers what a new one does', () => {
    fc.assert(fc.property(fc.array(fc.array(change, { maxLength: 6 }), { minLength: 1, maxLength: 8 }), (batches) => {
      const contents = { needs: new Contents('needs', CREATED), applied: new Contents('applied', CREATED), collect: new Contents('collect', CREATED), registry: new Contents('registry', CREATED) }
      for (const c of Object.values(contents)) c.buildIndexes()
      const views = { byWhat: Object.fromEntries(Object.entries(contents).map(([what, c]) => [what, { read: () => c, stale: false }])) } as unknown as AnsweredViews
      const kept = createOverviews(views)
      // A client of each live request: the rows it holds, and the cursor it holds them at.
      const live = requests.map((q) => ({ q, held: new Map(rowsOf(kept.ask(q).json).map((r) => [rowKey(r), r])), cursor: kept.live.snapshot(q, undefined, 1).cursor }))
      let revision = 0
      for (const batch of batches) {
        // Each bucket numbers its own revisions, as a stream does.
        for (const { at, operation, ms, nanos } of batch) contents[at.what].apply({ key: at.key, value, revision: contents[at.what].revision + 1 + (revision++ % 2), operation, created: new Date(Date.UTC(2026, 10, 29) + ms), nanos })
        const fresh = createOverviews(views)
        for (const q of requests) expect(kept.ask(q).json, JSON.stringify(q)).toBe(fresh.ask(q).json)
        for (const node of nodes) expect(attempt(() => kept.node(node).json)).toBe(attempt(() => fresh.node(node).json))
        for (const row of rowsOf(fresh.ask({ what: 'modules', filter: {} }).json)) expect(row, JSON.stringify(row)).toMatchObject(why(contents, row['node'] as string, row['module'] as string))
        for (const client of live) {
          const { changes, cursor } = kept.live.changes(client.q, client.cursor)
          for (const c of changes) {
            const row = JSON.parse(c.json) as Row
            if (c.type === 'put') client.held.set(rowKey(row), row)
            else client.held.delete(rowKey(row))
          }
          client.cursor = cursor
          expect([...client.held.values()].sort((a, b) => rowKey(a) < rowKey(b) ? -1 : 1), `live ${JSON.stringify(client.q)}`).toEqual(rowsOf(fresh.ask(client.q).json))
        }
      }
    }), { numRuns: 40 })
  }, 60_000)
})

type Row = Record<string, unknown>
const rowsOf = (json: string): Row[] => { const doc = JSON.parse(json) as { nodes?: Row[], modules?: Row[] }; return doc.nodes ?? doc.modules ?? [] }
const rowKey = (row: Row): string => [row['node'], row['module']].filter((x) => x !== undefined).join('.')

/** A module's waiting, waitingSince and unanswered counted from the entries themselves. */
function why (contents: Record<'needs' | 'applied' | 'registry', Contents>, node: string, module: string): Row {
  const instant = (c: Contents, key: string) => { const slot = c.entries.slotOf(key) as number; return { ms: c.entries.updatedAt(slot), nanos: c.entries.nanosAt(slot) } }
  const after = (a: { ms: number, nanos: number }, b: { ms: number, nanos: number }) => a.ms > b.ms || (a.ms === b.ms && a.nanos > b.nanos)
  const applied = contents.applied.entries.get(`${node}.${module}`) === undefined ? undefined : instant(contents.applied, `${node}.${module}`)
  const needs: Array<{ kind: string, at: { ms: number, nanos: number } }> = []
  for (let slot = 0; slot < contents.needs.entries.keys.size; slot++) {
    if (!contents.needs.entries.holds(slot)) continue
    const key = contents.needs.entries.keys.keyAt(slot)
    const [n, m, kind] = key.split('.') as [string, string, string]
    if (n === node && m === module) needs.push({ kind, at: { ms: contents.needs.entries.updatedAt(slot), nanos: contents.needs.entries.nanosAt(slot) } })
  }
  const waiting = needs.filter((x) => applied === undefined || after(x.at, applied)).map((x) => x.at).sort((a, b) => a.ms - b.ms || a.nanos - b.nanos)
  return {
    waiting: waiting.length,
    waitingSince: waiting[0] === undefined ? null : isoNanos(waiting[0]),
    unanswered: needs.filter((x) => contents.registry.entries.get(x.kind) === undefined).length
  }
}

const attempt = (f: () => string): string => {
  try {
    return f()
  } catch (err) {
    return (err as Error).message
  }
}

describe('a kept overview request', () => {
  const CREATED = '2026-11-29T09:40:00.123456789Z'
  const contents = { needs: new Contents('needs', CREATED), applied: new Contents('applied', CREATED), collect: new Contents('collect', CREATED), registry: new Contents('registry', CREATED) }
  for (const c of Object.values(contents)) c.buildIndexes()
  const views = { byWhat: Object.fromEntries(Object.entries(contents).map(([what, c]) => [what, { read: () => c, stale: false }])) } as unknown as AnsweredViews
  const put = (key: string, revision: number): void => { contents.needs.apply({ key, value: new TextEncoder().encode('{}'), revision, operation: 'PUT', created: new Date(Date.UTC(2026, 10, 29)) }) }

  test('holds its answer no longer than the run of code that asked for it, and its tag until the mesh moves', async () => {
    // vitest.config.ts runs the suite with --expose-gc.
    const gc = (globalThis as { gc?: () => void }).gc as () => void
    put('ace.gitea.secret.db', 1)
    const kept = createOverviews(views).keep({ what: 'nodes', filter: {} })
    const tag = kept.tag()
    const answered = new WeakRef(kept.answer())
    expect(answered.deref()?.tag).toBe(tag)
    // A transport keeps a thousand requests by their text's bytes: an answer of a megabyte each
    // would be held beyond every bound.
    await new Promise((resolve) => setImmediate(resolve))
    gc()
    expect(answered.deref()).toBeUndefined()
    expect(kept.tag()).toBe(tag)
    expect(JSON.parse(kept.answer().json)).toMatchObject({ total: 1, nodes: [{ node: 'ace', needs: 1 }] })
    put('bob.gitea.secret.db', 2)
    expect(kept.tag()).not.toBe(tag)
    expect(JSON.parse(kept.answer().json)).toMatchObject({ total: 2 })
  })
})
