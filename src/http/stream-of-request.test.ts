import { Writable } from 'node:stream'
import type { ServerResponse } from 'node:http'
import { expect, test } from 'vitest'
import { ProvisionerError } from '../domain/wire/errors.js'
import type { Provisioning } from '../domain/answers/provisioning.js'
import { Frames, Sse } from './sse.js'
import { SharedReads, StreamOfRequest, type FollowedViews } from './stream-of-request.js'

const CURSOR = '5-1796126188725546637'
const turns = async (n: number): Promise<void> => { for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve)) }

test('a refusal that persists is retried once, then again only after the view signals: the stream never spins', async () => {
  let snapshots = 0
  let signal: (() => void) | undefined
  const provisioning = {
    follow: (_request: unknown, _after: unknown, wake: () => void) => { signal = wake; return () => {} },
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
    held: () => ({ revision: 5, generation: '1796126188725546637' }),
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
