import { Writable } from 'node:stream'
import type { ServerResponse } from 'node:http'
import { expect, test } from 'vitest'
import { ProvisionerError } from '../domain/wire/errors.js'
import type { Provisioning } from '../domain/answers/provisioning.js'
import { Frames, Sse } from './sse.js'
import { SharedReads, StreamOfRequest, type FollowedViews, type SharedBatch } from './stream-of-request.js'

const CURSOR = '5-1796126188725546637'
const turns = async (n: number): Promise<void> => { for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve)) }

test('a refusal that persists is retried once, then again only after the view signals: the stream never spins', async () => {
  let snapshots = 0
  let signal: (() => void) | undefined
  const provisioning = {
    follow: (_request: unknown, _position: unknown, wake: () => void) => { signal = wake; return { moved: () => {}, stop: () => {} } },
    catchUp: async () => {},
    snapshot: () => {
      // A loop that never yields would starve the test's timers: it fails here instead.
      if (++snapshots > 50) throw new Error('the stream asked for 50 snapshots without waiting')
      return { entries: [], outOfShape: [], total: 0, cursor: CURSOR, stale: false }
    },
    changes: () => { throw new ProvisionerError('CURSOR_EXPIRED', 'since is from before revision 9') },
    count: () => ({ total: 0, stale: false })
  } as unknown as Provisioning
  const views: FollowedViews = {
    status: () => ({ bucket: 'mesh-provisioner_needs', state: 'live', stale: false, revision: 5, keys: 0, outOfShape: 0 }),
    held: () => ({ state: {} }),
    connected: () => true
  }
  const written: string[] = []
  const raw = new Writable({ write (chunk: Buffer, _encoding, done) { written.push(chunk.toString()); done() } })
  const sse = new Sse(raw as unknown as ServerResponse, false, 1000, new Frames(), () => {})
  const stream = new StreamOfRequest({ provisioning, views }, new SharedReads(), sse, { what: 'needs', filter: {} }, CURSOR)
  const running = stream.run()
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
  const generation = '1796126188725546637'
  const moves: Array<string | undefined> = []
  let signal: (() => void) | undefined
  let revision = 5
  const provisioning = {
    follow: (_request: unknown, position: string | undefined, wake: () => void) => {
      moves.push(position)
      signal = wake
      return { moved: (cursor: string | undefined) => { moves.push(cursor) }, stop: () => {} }
    },
    catchUp: async () => {},
    snapshot: () => ({ entries: [], outOfShape: [], total: 0, cursor: `5-${generation}`, stale: false }),
    changes: () => revision === 5
      ? { changes: [], cursor: `5-${generation}`, more: false }
      : { changes: [{ type: 'put', json: '{"key":"ace.m.secret.a"}', revision: 6 }], cursor: `6-${generation}`, more: false },
    count: () => ({ total: 1, stale: false })
  } as unknown as Provisioning
  const views: FollowedViews = {
    status: () => ({ bucket: 'mesh-provisioner_needs', state: 'live', stale: false, revision, keys: 1, outOfShape: 0 }),
    held: () => ({ state: {} }),
    connected: () => true
  }
  const raw = new Writable({ write (_chunk: Buffer, _encoding, done) { done() } })
  const sse = new Sse(raw as unknown as ServerResponse, false, 1000, new Frames(), () => {})
  const running = new StreamOfRequest({ provisioning, views }, new SharedReads(), sse, { what: 'needs', filter: {} }, undefined).run()
  await turns(10)
  revision = 6
  signal?.()
  await turns(10)
  expect(moves).toEqual([undefined, `5-${generation}`, `5-${generation}`, `6-${generation}`, `6-${generation}`])
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
  const generation = '1796126188725546637'
  // The contents' state, and the cursors they refuse: Contents.state moves with each refusal.
  const held = { state: {}, expiredBefore: 0 }
  let reads = 0
  const provisioning = {
    follow: () => ({ moved: () => {}, stop: () => {} }),
    catchUp: async () => {},
    snapshot: () => ({ entries: [], outOfShape: [], total: 0, cursor: `5-${generation}`, stale: false }),
    changes: (request: { since: { revision: number } }) => {
      reads++
      if (request.since.revision < held.expiredBefore) throw new ProvisionerError('CURSOR_EXPIRED', `since is from before revision ${held.expiredBefore}`)
      return { changes: [], cursor: `5-${generation}`, more: false }
    },
    count: () => ({ total: 0, stale: false })
  } as unknown as Provisioning
  const views: FollowedViews = {
    status: () => ({ bucket: 'mesh-provisioner_needs', state: 'live', stale: false, revision: 5, keys: 0, outOfShape: 0 }),
    held: () => held,
    connected: () => true
  }
  const shared = new SharedReads()
  /** A stream resumed from revision 4 until it has said `synced` or `reset`; what it wrote. */
  const resumed = async (): Promise<string> => {
    const written: string[] = []
    const raw = new Writable({ write (chunk: Buffer, _encoding, done) { written.push(chunk.toString()); done() } })
    const sse = new Sse(raw as unknown as ServerResponse, false, 1000, new Frames(), () => {})
    const running = new StreamOfRequest({ provisioning, views }, shared, sse, { what: 'needs', filter: {} }, `4-${generation}`).run()
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
  const generation = '1796126188725546637'
  const changes = Array.from({ length: 6 }, (_, i) => ({ type: 'put', json: `{"key":"ace.m.secret.k${i}"}`, revision: 6 + i }))
  const provisioning = {
    follow: () => ({ moved: () => {}, stop: () => {} }),
    catchUp: async () => {},
    snapshot: () => ({ entries: [], outOfShape: [], total: 0, cursor: `5-${generation}`, stale: false }),
    changes: () => ({ changes, cursor: `11-${generation}`, more: false }),
    count: () => ({ total: 6, stale: false })
  } as unknown as Provisioning
  const views: FollowedViews = {
    status: () => ({ bucket: 'mesh-provisioner_needs', state: 'live', stale: false, revision: 11, keys: 6, outOfShape: 0 }),
    held: () => ({ state: {} }),
    connected: () => true
  }
  // A socket that holds one write at a time and takes it a moment later: every event waits for a drain.
  const written: string[] = []
  const raw = new Writable({ highWaterMark: 1, write (chunk: Buffer, _encoding, done) { written.push(chunk.toString()); setTimeout(done, 2) } })
  const sse = new Sse(raw as unknown as ServerResponse, false, 1000, new Frames(), () => {})
  const running = new StreamOfRequest({ provisioning, views }, new SharedReads(), sse, { what: 'needs', filter: {} }, `5-${generation}`).run()
  await expect.poll(() => written.some((w) => w.includes('event: synced')), { timeout: 5000 }).toBe(true)
  const events = written.join('').split('\n\n').filter((e) => e.includes('event: put') || e.includes('event: synced'))
  expect(events.map((e) => /id: (\S+)/.exec(e)?.[1])).toEqual([...changes.map((c) => `${c.revision}-${generation}`), `11-${generation}`])
  raw.destroy()
  await running
})
