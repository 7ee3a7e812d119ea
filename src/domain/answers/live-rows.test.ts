// What wakes a stream of live rows (LiveRows.follow): every change that moves a row it keeps,
// after what it sent, and no write to a node or module its filter leaves out.

import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import type { ViewSignal } from '../follow/bucket-view.js'
import { Contents } from '../store/contents.js'
import type { What } from '../wire/key-shapes.js'
import type { OverviewRequest } from '../wire/request.js'
import type { AnsweredViews } from './port.js'
import { createProvisioning } from './provisioning.js'

const CREATED = '2026-11-29T09:40:00.123456789Z'
const value = new TextEncoder().encode('{}')

/** The four buckets' contents behind views that signal as bucket-view does, each change when `signal` says so. */
function mesh () {
  const contents = { needs: new Contents('needs', CREATED), applied: new Contents('applied', CREATED), collect: new Contents('collect', CREATED), registry: new Contents('registry', CREATED) }
  for (const c of Object.values(contents)) c.buildIndexes()
  const listeners = new Map<What, Set<(s: ViewSignal) => void>>()
  const view = (what: What, c: Contents) => ({
    read: () => c,
    stale: false,
    status: () => ({ state: 'live' }),
    listen: (l: (s: ViewSignal) => void) => {
      const set = listeners.get(what) ?? new Set()
      listeners.set(what, set.add(l))
      return () => { set.delete(l) }
    }
  })
  const views = { byWhat: Object.fromEntries(Object.entries(contents).map(([what, c]) => [what, view(what as What, c)])) } as unknown as AnsweredViews
  let ms = 0
  return {
    live: createProvisioning(views).overviews.live,
    /** Applies a change of `key` and, once the burst's signals are sent, lets the waiters look. */
    write (what: keyof typeof contents, key: string, operation: 'PUT' | 'DEL' = 'PUT'): void {
      const c = contents[what]
      c.apply({ key, value, revision: c.revision + 1, operation, created: new Date(Date.UTC(2026, 10, 29) + ms++), nanos: 0 })
    },
    async signal (what: What, s: ViewSignal = 'change'): Promise<void> {
      for (const l of [...listeners.get(what) ?? []]) l(s)
      await new Promise((resolve) => setImmediate(resolve))
    },
    listening: () => [...listeners.values()].reduce((n, set) => n + set.size, 0)
  }
}

/** A stream of `request`'s rows as the follower holds one: its cursor, moved by what it reads, and whether it was woken. */
function stream (m: ReturnType<typeof mesh>, request: OverviewRequest) {
  const cursor = m.live.snapshot(request, undefined, 1).cursor
  const s = { q: request, cursor, woken: 0, move: (to: string) => { s.cursor = to; following.moved(to) }, stop: () => { following.stop() } }
  const following = m.live.follow(request, cursor, () => { s.woken++ })
  return s
}

describe('a stream of live rows is woken', () => {
  test('by a write to a node and module it keeps, a registry write and a change of state; not by a write its filter leaves out; until it stops', async () => {
    const m = mesh()
    const s = stream(m, { what: 'modules', filter: { node: ['ace'], module: ['gitea'] } })
    for (const [what, key] of [['needs', 'bob.gitea.secret.x'], ['needs', 'ace.mail.secret.x'], ['applied', 'ace.mail'], ['needs', 'ace']] as const) {
      m.write(what, key)
      await m.signal(what)
    }
    expect(s.woken).toBe(0)
    m.write('applied', 'ace.gitea')
    await m.signal('applied')
    expect(s.woken).toBe(1)
    // A change the stream read before the waiters looked (it stepped for another reason) wakes nothing.
    m.write('needs', 'ace.gitea.port.x')
    s.move(m.live.snapshot(s.q, undefined, 1).cursor)
    await m.signal('needs')
    expect(s.woken).toBe(1)
    m.write('registry', 'secret')
    await m.signal('registry')
    await m.signal('needs', 'state')
    expect(s.woken).toBe(3)
    s.stop()
    expect(m.listening()).toBe(0)
  })

  test('by a row put and deleted in one burst, whose change is then its deletion', async () => {
    const m = mesh()
    const request: OverviewRequest = { what: 'nodes', filter: { node: ['ace'] } }
    m.write('collect', 'ace.sites.gitea')
    const s = stream(m, request)
    m.write('collect', 'ace.sites.gitea', 'DEL')
    m.write('needs', 'ace.gitea.secret.x')
    m.write('needs', 'ace.gitea.secret.x', 'DEL')
    await m.signal('needs')
    await m.signal('collect')
    expect(s.woken).toBe(2)
    expect(m.live.changes(request, s.cursor).changes).toEqual([{ type: 'delete', json: '{"node":"ace"}' }])
  })

  test('by every batch of writes that moves a row it keeps, after what it read', async () => {
    const nodes = ['a', 'b', 'c']
    const modules = ['m1', 'm2']
    const change = fc.record({
      what: fc.constantFrom('needs' as const, 'applied' as const, 'collect' as const, 'registry' as const),
      node: fc.constantFrom(...nodes),
      module: fc.constantFrom(...modules),
      kind: fc.constantFrom('port', 'secret'),
      odd: fc.boolean(),
      del: fc.boolean()
    })
    const requests: OverviewRequest[] = [
      { what: 'nodes', filter: {} },
      { what: 'nodes', filter: { node: ['b'] } },
      { what: 'modules', filter: { state: ['pending'] } },
      { what: 'modules', filter: { node: ['a', 'c'], module: ['m2'] } }
    ]
    await fc.assert(fc.asyncProperty(fc.array(fc.array(change, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 6 }), async (batches) => {
      const m = mesh()
      const streams = requests.map((q) => stream(m, q))
      for (const batch of batches) {
        for (const { what, node, module, kind, odd, del } of batch) {
          const key = what === 'registry' ? kind : odd ? `${node}.odd` : what === 'needs' ? `${node}.${module}.${kind}.x` : what === 'applied' ? `${node}.${module}` : `${node}.sites.${module}`
          m.write(what, key, del ? 'DEL' : 'PUT')
        }
        for (const what of new Set(batch.map((c) => c.what))) await m.signal(what)
        for (const s of streams) {
          const { changes, cursor } = m.live.changes(s.q, s.cursor)
          if (changes.length > 0) expect(s.woken, `${JSON.stringify(s.q)} after ${JSON.stringify(batch)}`).toBeGreaterThan(0)
          s.move(cursor)
          s.woken = 0
        }
      }
      for (const s of streams) s.stop()
    }), { numRuns: 60 })
  })
})

test('the rows\' state stays while the contents they read hold what they held, and moves when any of them moves, the registry\'s too', () => {
  const m = mesh()
  const q: OverviewRequest = { what: 'modules', filter: {} }
  const first = m.live.state(q)
  expect(m.live.state({ what: 'modules', filter: { node: ['ace'] } })).toBe(first)
  m.write('collect', 'ace.shell:zsh:normal.gitea')
  expect(m.live.state(q)).toBe(first)
  for (const what of ['needs', 'applied', 'registry'] as const) {
    const before = m.live.state(q)
    m.write(what, what === 'needs' ? 'ace.gitea.secret.x' : what === 'applied' ? 'ace.gitea' : 'secret')
    expect(m.live.state(q)).not.toBe(before)
  }
})
