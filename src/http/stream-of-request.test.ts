import { Writable } from 'node:stream'
import type { ServerResponse } from 'node:http'
import { expect, test } from 'vitest'
import { ProvisionerError } from '../domain/wire/errors.js'
import type { Provisioning } from '../domain/answers/provisioning.js'
import { Frames, Sse } from './sse.js'
import { SharedReads, StreamOfRequest, type FollowedViews, type SharedBatch } from './stream-of-request.js'

const GENERATION = '1796126188725546637'
const CURSOR = `5-${GENERATION}`
const turns = async (n: number): Promise<void> => { for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve)) }

/** The answers a stream reads, as `Provisioning` gives them: no changes after a snapshot of nothing at CURSOR, unless `answers` says otherwise. */
function provisioningOf (answers: Partial<Record<'follow' | 'snapshot' | 'changes' | 'count', unknown>>): Provisioning {
  return {
    follow: () => ({ moved: () => {}, stop: () => {} }),
    catchUp: async () => {},
    snapshot: () => ({ entries: [], outOfShape: [], total: 0, cursor: CURSOR, stale: false }),
    changes: () => ({ changes: [], cursor: CURSOR, more: false }),
    count: () => ({ total: 0, stale: false }),
    ...answers
  } as unknown as Provisioning
}

/** A live needs view at `revision()`, its contents in `held()`'s state. */
function liveViews (revision: () => number, held: () => { readonly state: object } = () => ({ state: {} })): FollowedViews {
  return {
    status: () => ({ bucket: 'mesh-provisioner_needs', state: 'live', stale: false, revision: revision(), keys: 0, outOfShape: 0 }),
    held,
    connected: () => true
  }
}

/** A stream of every needs entry, resumed from `resume`, written to `raw` (unless given, a socket that takes every write at once and keeps it in `written`), and its run. */
function openStream (provisioning: Provisioning, views: FollowedViews, resume: string | undefined, options: { reads?: SharedReads, raw?: Writable } = {}): { written: string[], raw: Writable, running: Promise<void> } {
  const written: string[] = []
  const raw = options.raw ?? new Writable({ write (chunk: Buffer, _encoding, done) { written.push(chunk.toString()); done() } })
  const sse = new Sse(raw as unknown as ServerResponse, false, 1000, new Frames(), () => {})
  const running = new StreamOfRequest({ provisioning, views }, options.reads ?? new SharedReads(), sse, { what: 'needs', filter: {} }, resume).run()
  return { written, raw, running }
}

test('a refusal that persists is retried once, then again only after the view signals: the stream never spins', async () => {
  let snapshots = 0
  let signal: (() => void) | undefined
  const provisioning = provisioningOf({
    follow: (_request: unknown, _position: unknown, wake: () => void) => { signal = wake; return { moved: () => {}, stop: () => {} } },
    snapshot: () => {
      // A loop that never yields would starve the test's timers: it fails here instead.
      if (++snapshots > 50) throw new Error('the stream asked for 50 snapshots without waiting')
      return { entries: [], outOfShape: [], total: 0, cursor: CURSOR, stale: false }
    },
    changes: () => { throw new ProvisionerError('CURSOR_EXPIRED', 'since is from before revision 9') }
  })
  const { written, raw, running } = openStream(provisioning, liveViews(() => 5), CURSOR)
  await turns(20)
  // The resumed cursor refused, a snapshot at once, its cursor refused too: then it waits.
  expect(snapshots).toBe(1)
  // Each signal: one snapshot, and one more at once when its cursor is refused.
  for (const after of [3, 5]) {
    signal?.()
    await turns(20)
    expect(snapshots).toBe(after)
  }
  expect(written.filter((w) => w.includes('event: reset')).length).toBe(5)
  raw.destroy()
  await running
})

test('the stream moves its waiter to every cursor it sends, so that a change it already sent does not wake it again', async () => {
  const moves: Array<string | undefined> = []
  let signal: (() => void) | undefined
  let revision = 5
  const provisioning = provisioningOf({
    follow: (_request: unknown, position: string | undefined, wake: () => void) => {
      moves.push(position)
      signal = wake
      return { moved: (cursor: string | undefined) => { moves.push(cursor) }, stop: () => {} }
    },
    changes: () => revision === 5
      ? { changes: [], cursor: CURSOR, more: false }
      : { changes: [{ type: 'put', json: '{"key":"ace.m.secret.a"}', revision: 6 }], cursor: `6-${GENERATION}`, more: false },
    count: () => ({ total: 1, stale: false })
  })
  const { raw, running } = openStream(provisioning, liveViews(() => revision), undefined)
  await turns(10)
  revision = 6
  signal?.()
  await turns(10)
  expect(moves).toEqual([undefined, CURSOR, CURSOR, `6-${GENERATION}`, `6-${GENERATION}`])
  raw.destroy()
  await running
})

test('SharedReads reads the changes once for streams asking the same request after the same cursor in the same state, and again when any of the three differs', () => {
  const reads = new SharedReads()
  let read = 0
  const batch = (): SharedBatch => { read++; return { changes: [], ids: [], cursor: CURSOR, more: false, next: CURSOR } }
  const asks: Array<[string, string, unknown]> = [['["needs",{}]', '5-1', '9-1'], ['["needs",{}]', '5-1', '9-1'], ['["needs",{}]', '6-1', '9-1'], ['["needs",{}]', '6-1', '10-1'], ['["applied",{}]', '6-1', '10-1']]
  const counts = asks.map(([request, since, state]) => { reads.changes(request, since, state, batch); return read })
  expect(counts).toEqual([1, 1, 2, 3, 4])
})

test('streams of one request at one cursor share a read only while the contents held are in the same state: once it moves (a cursor refused, a read again), the next stream reads anew', async () => {
  // The contents' state, and the cursors they refuse: Contents.state moves with each refusal.
  const held = { state: {}, expiredBefore: 0 }
  let reads = 0
  const provisioning = provisioningOf({
    changes: (request: { since: { revision: number } }) => {
      reads++
      if (request.since.revision < held.expiredBefore) throw new ProvisionerError('CURSOR_EXPIRED', `since is from before revision ${held.expiredBefore}`)
      return { changes: [], cursor: CURSOR, more: false }
    }
  })
  const views = liveViews(() => 5, () => held)
  const shared = new SharedReads()
  /** A stream resumed from revision 4 until it has said `synced` or `reset`; what it wrote. */
  const resumed = async (): Promise<string> => {
    const { written, raw, running } = openStream(provisioning, views, `4-${GENERATION}`, { reads: shared })
    await turns(10)
    raw.destroy()
    await running
    return written.join('')
  }
  expect(await resumed()).toContain('event: synced')
  expect(await resumed()).toContain('event: synced')
  expect(reads).toBe(1)
  // Contents read again at the same revision, refusing nothing: read anew, not shared with those before.
  held.state = {}
  expect(await resumed()).toContain('event: synced')
  expect(reads).toBe(2)
  // The contents now refuse cursors before 5: the stream at 4 is told so, not given the read of before.
  held.expiredBefore = 5
  held.state = {}
  expect(await resumed()).toContain('event: reset')
})

test('a reader behind in the middle of the changes gets every one of them, in order, and then synced, once its socket drains', async () => {
  const changes = Array.from({ length: 6 }, (_, i) => ({ type: 'put', json: `{"key":"ace.m.secret.k${i}"}`, revision: 6 + i }))
  const provisioning = provisioningOf({ changes: () => ({ changes, cursor: `11-${GENERATION}`, more: false }), count: () => ({ total: 6, stale: false }) })
  // A socket that holds one write at a time and takes it a moment later: every event waits for a drain.
  const written: string[] = []
  const slow = new Writable({ highWaterMark: 1, write (chunk: Buffer, _encoding, done) { written.push(chunk.toString()); setTimeout(done, 2) } })
  const { raw, running } = openStream(provisioning, liveViews(() => 11), CURSOR, { raw: slow })
  await expect.poll(() => written.some((w) => w.includes('event: synced')), { timeout: 5000 }).toBe(true)
  const events = written.join('').split('\n\n').filter((e) => e.includes('event: put') || e.includes('event: synced'))
  expect(events.map((e) => /id: (\S+)/.exec(e)?.[1])).toEqual([...changes.map((c) => `${c.revision}-${GENERATION}`), `11-${GENERATION}`])
  raw.destroy()
  await running
})
