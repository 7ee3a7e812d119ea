// One bucket's view against a real nats-server: a check of the bucket that was still asking
// when its watch ended must not touch the watch that follows, and a check finds what the stream
// lost after it was delivered.

import type { ConsumerConfig, JetStreamManager, KV, NatsConnection, StreamInfoRequestOptions } from 'nats'
import { beforeAll, expect, test, vi } from 'vitest'
import { BUCKETS, type What } from '../src/domain/wire/key-shapes.js'
import { BucketView } from '../src/domain/follow/bucket-view.js'
import type { Contents } from '../src/domain/store/contents.js'
import type { Logger } from '../src/domain/logger.js'
import { suiteFixture } from './support/service.js'

const fx = suiteFixture()
let nc: NatsConnection

beforeAll(async () => {
  nc = await fx.admin(await fx.server())
  const kv = await nc.jetstream().views.kv(BUCKETS.applied)
  await kv.put('n1.gitea', '{}')
})

/** A logger that keeps every message (and warnings with their fields), to count the watches started. */
function recording (): { log: Logger, messages: string[], warnings: Array<{ fields: unknown, message: unknown }> } {
  const messages: string[] = []
  const warnings: Array<{ fields: unknown, message: unknown }> = []
  const keep = (...args: unknown[]): void => { messages.push(String(typeof args[0] === 'string' ? args[0] : args[1])) }
  const warn = (...args: unknown[]): void => {
    keep(...args)
    warnings.push({ fields: args[0], message: args[1] })
  }
  return { log: { debug: keep, info: keep, warn, error: keep }, messages, warnings }
}

test('a check still asking when its watch ended neither ends the next watch nor changes its state', async () => {
  const real = await nc.jetstreamManager()
  let hold: Promise<void> | undefined
  let release = (): void => {}
  let held: 'no' | 'waiting' | 'answered' = 'no'
  let calls = 0
  // The real stream info, except that one call, once armed, waits and then meets a real "stream not found".
  const jsm = {
    consumers: real.consumers,
    streams: {
      info: async (name: string) => {
        try {
          if (hold === undefined) return await real.streams.info(name)
          const wait = hold
          hold = undefined
          held = 'waiting'
          await wait
          try {
            return await real.streams.info('KV_no-such-bucket')
          } finally {
            held = 'answered'
          }
        } finally {
          calls++
        }
      }
    }
  } as unknown as JetStreamManager
  const { log, messages } = recording()
  const caughtUp = (): number => messages.filter((m) => m === 'view caught up').length
  const view = new BucketView({ what: 'applied', nc, jsm, log, checkMs: 20 })
  view.start()
  try {
    await vi.waitFor(() => { expect(view.status()).toMatchObject({ state: 'live', stale: false }) })
    hold = new Promise((resolve) => { release = resolve })
    await vi.waitFor(() => { expect(held).toBe('waiting') })
    view.restart()
    await vi.waitFor(() => { expect(caughtUp()).toBe(1) })
    release()
    await vi.waitFor(() => { expect(held).toBe('answered') })
    // Ten checks of the new watch later: had the old check ended it, the view would have caught up again.
    const after = calls
    await vi.waitFor(() => { expect(calls).toBeGreaterThanOrEqual(after + 10) })
    expect(caughtUp()).toBe(1)
    expect(view.status()).toMatchObject({ state: 'live', stale: false, keys: 1 })
  } finally {
    await view.stop()
  }
})

test('a check that fails for another reason than a missing stream says so, naming the bucket', async () => {
  const real = await nc.jetstreamManager()
  let failing = false
  // Once armed, every check meets the real refusal of a stream name NATS does not take.
  const jsm = { consumers: real.consumers, streams: { info: async (name: string) => await real.streams.info(failing ? 'no.such.name' : name) } } as unknown as JetStreamManager
  const { log, warnings } = recording()
  const view = new BucketView({ what: 'applied', nc, jsm, log, checkMs: 20 })
  view.start()
  try {
    await vi.waitFor(() => { expect(view.status().state).toBe('live') })
    failing = true
    await vi.waitFor(() => {
      expect(warnings).toContainEqual({ fields: { err: expect.any(Error), bucket: BUCKETS.applied }, message: 'checking the bucket failed; checking again in %d ms' })
    })
  } finally {
    await view.stop()
  }
})

type Warnings = ReturnType<typeof recording>['warnings']

/**
 * A view of `what` live on two keys, the second of which is then deleted from the stream by
 * hand (as a loss, or an expiry, removes it), and what `then` sees of it.
 */
async function oneRemovedByHand (what: What, kv: KV, keys: readonly [string, string], opts: { jsm: JetStreamManager, checkMs: number }, then: (view: BucketView, warnings: Warnings, removed: number) => Promise<void>): Promise<void> {
  await kv.put(keys[0], '{}')
  const removed = await kv.put(keys[1], '{}')
  const { log, warnings } = recording()
  const view = new BucketView({ what, nc, jsm: opts.jsm, log, checkMs: opts.checkMs, heartbeatMs: 200 })
  view.start()
  try {
    await vi.waitFor(() => { expect(view.status()).toMatchObject({ state: 'live', stale: false, keys: 2 }) })
    await (await nc.jetstreamManager()).streams.deleteMessage(`KV_${BUCKETS[what]}`, removed, false)
    await then(view, warnings, removed)
  } finally {
    await view.stop()
  }
}

const reloaded = (warnings: Warnings): unknown[] => warnings.map((w) => w.message).filter((m) => /^bucket %s; reloading it/.test(String(m)))

test('a message the stream lost after it was delivered (deleted by hand) is noticed by a check: the bucket is read again, and its key goes', async () => {
  const kv = await nc.jetstream().views.kv(BUCKETS.collect)
  await oneRemovedByHand('collect', kv, ['n1.c.a', 'n1.c.b'], { jsm: await nc.jetstreamManager(), checkMs: 1000 }, async (view, warnings, removed) => {
    const refusedWhenTold: number[] = []
    view.listen((signal) => { if (signal === 'state') refusedWhenTold.push(view.read().expiredBefore) })
    // The read again ends at the consumer's idle heartbeat, the stream's last revision being gone; on
    // a server that loses deliveries it is read once more to be sure.
    await vi.waitFor(() => { expect(view.status()).toMatchObject({ state: 'live', stale: false, keys: 1 }) }, { timeout: 10_000, interval: 50 })
    expect([view.read().entries.has('n1.c.a'), view.read().entries.has('n1.c.b')]).toEqual([true, false])
    expect(reloaded(warnings)).not.toEqual([])
    // The read again has not met the key: once the stream says it holds no message of it, a client
    // may hold it with no deletion to be told, and the cursors before are refused, saying why.
    await vi.waitFor(() => { expect(view.read().expiredBefore).toBe(removed) }, { timeout: 10_000, interval: 50 })
    expect(view.read().expiredBecause).toMatch(/found 1 key it held gone with no deletion marker \(n1\.c\.b: messages removed from the stream\)/)
    // Held requests and event streams at a refused cursor hear it at once, not at the next write.
    expect(refusedWhenTold).toContain(removed)
  })
})

test('a bucket whose messages expire (a max age) is not counted: its expiries never have it read again', async () => {
  const real = await nc.jetstreamManager()
  let checks = 0
  const jsm = { consumers: real.consumers, streams: { info: async (name: string) => { checks++; return await real.streams.info(name) } } } as unknown as JetStreamManager
  const kv = await nc.jetstream().views.kv(BUCKETS.registry, { history: 1, ttl: 3_600_000 })
  await oneRemovedByHand('registry', kv, ['secret', 'port'], { jsm, checkMs: 20 }, async (view, warnings) => {
    // Removed as an expiry removes it: the counts differ from now on.
    const after = checks
    await vi.waitFor(() => { expect(checks).toBeGreaterThanOrEqual(after + 10) })
    expect(reloaded(warnings)).toEqual([])
    expect(view.status()).toMatchObject({ keys: 2 })
  })
})

test('a key written again while the bucket is read again is met after the read ends, not taken for lost: no cursor is refused', async () => {
  const kv = await nc.jetstream().views.kv(BUCKETS.needs, { history: 1 })
  await kv.put('n1.gitea.secret.a', '{}')
  await kv.put('n1.gitea.secret.b', '{}')
  const real = await nc.jetstreamManager()
  let armed = false
  let looks = 0
  // Once armed, the next look at the stream finds it ending a revision early, so the view reads
  // it again (as it does after a purge on nats-server 2.9.10), and the key is written again between
  // that look and the read's consumer: the read passes no message of it before its end.
  const jsm = {
    consumers: {
      add: async (stream: string, config: Partial<ConsumerConfig>) => {
        if (armed && config.opt_start_seq === undefined) {
          armed = false
          await kv.put('n1.gitea.secret.a', '{"again":true}')
        }
        return await real.consumers.add(stream, config)
      }
    },
    streams: {
      info: async (name: string, opts?: Partial<StreamInfoRequestOptions>) => {
        const info = await real.streams.info(name, opts)
        if (opts === undefined) looks++
        return armed && opts === undefined ? { ...info, state: { ...info.state, last_seq: info.state.last_seq - 1 } } : info
      }
    }
  } as unknown as JetStreamManager
  const { log, warnings } = recording()
  const view = new BucketView({ what: 'needs', nc, jsm, log, checkMs: 50, heartbeatMs: 200 })
  view.start()
  try {
    await vi.waitFor(() => { expect(view.status()).toMatchObject({ state: 'live', stale: false, keys: 2 }) })
    armed = true
    view.restart()
    await vi.waitFor(() => { expect(view.read().entries.revision('n1.gitea.secret.a')).toBe(3) })
    expect(reloaded(warnings)).not.toEqual([])
    // Checks that would have asked the stream about a key not yet met have come and gone.
    const read = view.read()
    const after = looks
    await vi.waitFor(() => { expect(looks).toBeGreaterThanOrEqual(after + 4) })
    expect(view.read()).toBe(read)
    expect(view.status()).toMatchObject({ state: 'live', stale: false, keys: 2 })
    expect(view.read().expiredBefore).toBe(0)
  } finally {
    await view.stop()
  }
})

test('a read again that is served before its consumer is answered is told to listeners: held requests and event streams look at what it found', async () => {
  const real = await nc.jetstreamManager()
  let before: Contents | undefined
  let armed = false
  // Once armed, the next look finds the stream ending a revision early, so the view reads it again;
  // and the read's consumer is answered only once the read is served, as a slow turn of the event
  // loop does to a small bucket whose messages arrive with the answer: never told stale meanwhile.
  const jsm = {
    consumers: {
      add: async (stream: string, config: Partial<ConsumerConfig>) => {
        const info = await real.consumers.add(stream, config)
        if (before !== undefined && config.opt_start_seq === undefined) await vi.waitFor(() => { expect(view.read()).not.toBe(before) })
        return info
      }
    },
    streams: {
      info: async (name: string, opts?: Partial<StreamInfoRequestOptions>) => {
        const info = await real.streams.info(name, opts)
        if (!armed || opts !== undefined) return info
        armed = false
        return { ...info, state: { ...info.state, last_seq: info.state.last_seq - 1 } }
      }
    }
  } as unknown as JetStreamManager
  const { log, warnings } = recording()
  const view = new BucketView({ what: 'applied', nc, jsm, log, checkMs: 60_000 })
  view.start()
  try {
    await vi.waitFor(() => { expect(view.status()).toMatchObject({ state: 'live', stale: false, keys: 1 }) })
    const told: Array<Contents | undefined> = []
    view.listen((signal) => { if (signal === 'state') told.push(view.read()) })
    before = view.read()
    armed = true
    view.restart()
    await vi.waitFor(() => { expect(view.read()).not.toBe(before) })
    expect(reloaded(warnings)).not.toEqual([])
    await vi.waitFor(() => { expect(told).toContain(view.read()) })
  } finally {
    await view.stop()
  }
})
