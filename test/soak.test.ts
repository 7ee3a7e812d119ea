// The service under churn and faults, on each nats-server (vitest.config.ts): three writers put,
// delete and purge across the client buckets (out-of-shape keys and values that are not JSON among
// them) while nats-server is killed and restarted, the service is restarted and a bucket is created
// again. Event streams resume by their last id, `since` pollers follow on both faces, and at the
// end each of them, and the lists, equal a fresh read of NATS, key for key, revision for revision.
// `npm test` runs it for seconds; `npm run soak` (SOAK_MS) for minutes, printing RSS as it goes.

import type { KV } from 'nats'
import { expect, test, vi } from 'vitest'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import type { Running } from '../src/service.js'
import { createClientBuckets } from '../testkit/sample-mesh.js'
import { fixture, killAndRestart, startTestService, untilReady } from './support/service.js'
import { httpAsk, SincePoller, StreamFollower, verbAsk } from './support/followers.js'
import { freshRead, listed } from './support/truth.js'

type Client = 'needs' | 'applied' | 'collect'
const CLIENTS: Client[] = ['needs', 'applied', 'collect']

/** How long the writers churn; the faults are spread over it. */
const SOAK_MS = Number(process.env['SOAK_MS'] ?? 6000)
const LONG = SOAK_MS > 60_000

const sorted = (m: Map<string, number>): Map<string, number> => new Map([...m].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0))
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T

function nodes (count: number): string[] {
  return Array.from({ length: count }, (_, i) => `n${i}`)
}

/**
 * Keys of each bucket, some out of shape: about a thousand, so that deletes and purges meet keys
 * that are there, and most keys are written only a few times (a view that lost a change is not
 * put right by the next write of the same key).
 */
const KEYS: Record<Client, string[]> = {
  needs: [...nodes(40).flatMap((n) => ['gitea', 'mail'].flatMap((m) => ['config', 'secret'].flatMap((k) => [1, 2, 3].map((i) => `${n}.${m}.${k}.c${i}`)))), 'ace.gitea', 'g14.mail.config'],
  applied: [...nodes(300).flatMap((n) => ['gitea', 'mail', 'grafana', 'postgres'].map((m) => `${n}.${m}`)), 'ace', 'g14.mail.extra'],
  collect: [...nodes(100).flatMap((n) => ['shell=3Azsh', 'environment'].flatMap((c) => ['gitea', 'mail', 'grafana'].map((who) => `${n}.${c}.${who}`))), 'ace.shell=3.gitea', 'g14.environment']
}

/** A writer of one bucket: put (now and then a value that is not JSON), delete and purge, until told to stop; a write NATS refuses is tried no more. */
async function write (kv: () => KV, what: Client, until: () => boolean): Promise<number> {
  let n = 0
  while (!until()) {
    const key = pick(KEYS[what])
    const roll = Math.random()
    try {
      if (roll < 0.6) await kv().put(key, roll < 0.05 ? 'not json {' : JSON.stringify({ n, by: what }))
      else if (roll < 0.8) await kv().delete(key)
      else await kv().purge(key)
      n++
    } catch {
      // NATS away or the bucket being created again: the writer goes on once it is back.
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  return n
}

test(`the views, event streams and since pollers end equal to NATS after ${SOAK_MS} ms of churn and faults`, async () => {
  const fx = fixture()
  const server = await fx.server()
  const nc = await fx.admin(server)
  // Writes fail fast while NATS is away, rather than after the client's 5 s.
  const js = nc.jetstream({ timeout: 1000 })
  await createClientBuckets(nc)
  const kv: Record<Client, KV> = {
    needs: await js.views.kv(BUCKETS.needs, { bindOnly: true }),
    applied: await js.views.kv(BUCKETS.applied, { bindOnly: true }),
    collect: await js.views.kv(BUCKETS.collect, { bindOnly: true })
  }
  let running: Running = await startTestService(server)
  fx.defer(async () => await running.stop())
  await untilReady(running)
  const url = (): string => running.url

  const streams = CLIENTS.map((what) => new StreamFollower(url, what))
  const httpPollers = CLIENTS.map((what) => new SincePoller(async (q) => await httpAsk(url, q), what))
  const verbPollers = CLIENTS.map((what) => new SincePoller(async (q) => await verbAsk(nc, q), what))
  fx.defer(async () => {
    for (const c of [...streams, ...httpPollers, ...verbPollers]) c.stop()
    await Promise.all([...streams, ...httpPollers, ...verbPollers].map(async (c) => await c.done))
  })

  const version = nc.info?.version ?? '?'
  const started = Date.now()
  const over = (): boolean => Date.now() - started >= SOAK_MS
  const rss: string[] = []
  const sample = setInterval(() => {
    const { rss: bytes, heapUsed } = process.memoryUsage()
    const line = `${Math.round((Date.now() - started) / 1000)} s: rss ${Math.round(bytes / 2 ** 20)} MB, heap ${Math.round(heapUsed / 2 ** 20)} MB`
    rss.push(line)
    if (LONG) console.log(`soak on nats-server ${version} at ${line}`)
  }, LONG ? 10_000 : 1000)
  fx.defer(async () => { clearInterval(sample) })
  const writers = CLIENTS.map(async (what) => await write(() => kv[what], what, over))

  // The faults, one after another, again and again until the churn is over.
  const faults: Array<[string, () => Promise<void>]> = [
    ['nats-server killed and restarted', async () => await killAndRestart(server, { reconnecting: [running.nc, nc] })],
    ['the service restarted', async () => {
      await running.stop()
      running = await startTestService(server)
      await untilReady(running, 20_000)
    }],
    ['bucket applied deleted and created again', async () => {
      const jsm = await nc.jetstreamManager()
      await jsm.streams.delete(`KV_${BUCKETS.applied}`)
      await js.views.kv(BUCKETS.applied, { history: 1 })
    }]
  ]
  const happened: string[] = []
  for (let i = 0; !over(); i++) {
    const [name, fault] = faults[i % faults.length] as [string, () => Promise<void>]
    await fault()
    happened.push(name)
    // Churn between faults: a fault's aftermath meets writes, not the next fault.
    const next = Date.now() + Math.max(500, SOAK_MS / (LONG ? 30 : 4))
    await vi.waitFor(() => { expect(over() || Date.now() >= next).toBe(true) }, { timeout: SOAK_MS, interval: 50 })
  }
  const writes = await Promise.all(writers)
  expect(happened.length, 'every kind of fault happened').toBeGreaterThanOrEqual(faults.length)

  // Read with the client's own timeout: the writers' 1 s is for failing fast while NATS is away,
  // and on a loaded machine creating the read's consumer can take longer.
  const settled = nc.jetstream()
  const truth = Object.fromEntries(await Promise.all(CLIENTS.map(async (what) => [what, await freshRead(await settled.views.kv(BUCKETS[what], { bindOnly: true }))]))) as Record<Client, Map<string, number>>
  await vi.waitFor(async () => {
    for (const [i, what] of CLIENTS.entries()) {
      expect(await listed(running.url, what), `the ${what} list`).toEqual(truth[what])
      expect(sorted((streams[i] as StreamFollower).shown), `the ${what} event stream`).toEqual(truth[what])
      expect(sorted((httpPollers[i] as SincePoller).held), `the ${what} since poller over HTTP`).toEqual(truth[what])
      expect(sorted((verbPollers[i] as SincePoller).held), `the ${what} since poller on the bus (answers: ${JSON.stringify([...(verbPollers[i] as SincePoller).statuses])})`).toEqual(truth[what])
    }
  }, { timeout: 30_000, interval: 250 })
  // Only applied is created again: a follower of the others is never told to read its list again.
  for (const [i, what] of CLIENTS.entries()) {
    if (what === 'applied') continue
    for (const p of [httpPollers[i], verbPollers[i]] as SincePoller[]) expect(p.refusals, `410s to a since poller of ${what}`).toEqual([])
    expect((streams[i] as StreamFollower).resets, `resets of the ${what} event stream`).toBe(0)
  }
  console.log(`soak on nats-server ${version}: ${SOAK_MS} ms, ${writes.join('/')} writes (needs/applied/collect), faults: ${happened.join(', ')}; ` +
    `refusals ${JSON.stringify([...httpPollers, ...verbPollers].flatMap((p) => p.refusals))}; stream resets ${streams.map((s) => s.resets).join('/')}, since re-lists ${httpPollers.map((p) => p.relisted).join('/')} (HTTP) ${verbPollers.map((p) => p.relisted).join('/')} (bus); ${rss.at(-1) ?? ''}`)
}, SOAK_MS + 120_000)
