// The feed of a bucket's changes against a real nats-server: what it reads of each message, where
// its snapshot ends, flow control past the server's window, and a consumer the server lost.

import type { JetStreamManager, KV, NatsConnection } from 'nats'
import { beforeAll, expect, test, vi } from 'vitest'
import type { KvChange } from '../src/domain/store/contents.js'
import { KvFeed, type KvFeedOptions } from '../src/domain/follow/kv-feed.js'
import { suiteFixture } from './support/service.js'

const fx = suiteFixture()
let nc: NatsConnection
let jsm: JetStreamManager
let buckets = 0

beforeAll(async () => {
  nc = await fx.admin(await fx.server())
  jsm = await nc.jetstreamManager()
})

async function bucket (): Promise<{ name: string, kv: KV }> {
  const name = `feed-${buckets++}`
  return { name, kv: await nc.jetstream().views.kv(name) }
}

interface Fed { changes: KvChange[], initializedAfter: number | undefined, recreated: string[], feed: KvFeed }

/** Starts a feed that keeps what it is fed (each change's value copied: it is a view of the read buffer). */
async function feed (name: string, opts: Partial<KvFeedOptions> = {}): Promise<Fed> {
  const fed: Fed = { changes: [], initializedAfter: undefined, recreated: [], feed: undefined as unknown as KvFeed }
  // As the follower reads it: the stream's last sequence before the feed starts.
  const { state } = await jsm.streams.info(`KV_${name}`).catch(() => ({ state: { messages: 0, last_seq: 0 } }))
  fed.feed = new KvFeed({
    nc,
    jsm,
    bucket: name,
    endsAt: state.messages === 0 ? 0 : state.last_seq,
    // Read field by field: a change's key is made from its bytes when read (a getter no spread copies).
    onChange: (e) => { fed.changes.push({ key: e.key, keyBytes: e.keyBytes, revision: e.revision, operation: e.operation, value: new Uint8Array(e.value), created: e.created, ...(e.nanos === undefined ? {} : { nanos: e.nanos }) }) },
    onInitialized: () => { fed.initializedAfter = fed.changes.length },
    onRecreate: (why) => { fed.recreated.push(why) },
    ...opts
  })
  await fed.feed.start()
  return fed
}

test('an empty bucket is initialized at once, and what comes after is fed', async () => {
  const { name, kv } = await bucket()
  const fed = await feed(name)
  try {
    expect(fed.initializedAfter).toBe(0)
    await kv.put('a.b', 'v1')
    await vi.waitFor(() => { expect(fed.changes).toHaveLength(1) })
    expect(fed.changes[0]).toMatchObject({ key: 'a.b', revision: 1, operation: 'PUT' })
    // The key's bytes, which a load applies without its string (Contents.apply), are the key's.
    expect(Buffer.from(fed.changes[0]?.keyBytes ?? []).toString()).toBe('a.b')
  } finally {
    fed.feed.stop()
  }
})

test.each([false, true])('the snapshot, larger than the flow-control window, is the last value of every key, and ends where it ends (read whole: %s)', async (onePerKey) => {
  const { name, kv } = await bucket()
  const value = 'x'.repeat(1000)
  for (let i = 0; i < 3000; i++) await kv.put(`k.${i}`, value)
  await kv.put('k.0', 'again')
  await kv.delete('k.1')
  await kv.purge('k.2')
  const before = Date.now()
  // Heartbeats far apart: a stalled consumer's heartbeat would otherwise release it without flow control's answer.
  const fed = await feed(name, { heartbeatMs: 30_000, onePerKey })
  try {
    await vi.waitFor(() => { expect(fed.initializedAfter).toBe(3000) }, { timeout: 10_000 })
    const byKey = new Map(fed.changes.map((c) => [c.key, c]))
    expect(byKey.size).toBe(3000)
    expect(byKey.get('k.0')).toMatchObject({ revision: 3001, operation: 'PUT', value: new TextEncoder().encode('again') })
    expect(byKey.get('k.1')).toMatchObject({ revision: 3002, operation: 'DEL', value: new Uint8Array(0) })
    expect(byKey.get('k.2')).toMatchObject({ revision: 3003, operation: 'PURGE' })
    expect(byKey.get('k.3')).toMatchObject({ revision: 4, operation: 'PUT', value: new TextEncoder().encode(value) })
    // Stored times are before the feed began and within a minute of it.
    for (const c of fed.changes) expect(before - c.created.getTime()).toBeLessThan(60_000)
    const revisions = fed.changes.map((c) => c.revision)
    expect(revisions).toEqual([...revisions].sort((a, b) => a - b))
    const e = await kv.get('k.3')
    expect(byKey.get('k.3')?.created.getTime()).toBe(e?.created.getTime())
  } finally {
    fed.feed.stop()
  }
})

test('a bucket that keeps several values of a key, not read whole, gives the last of each', async () => {
  const name = `feed-${buckets++}`
  const kv = await nc.jetstream().views.kv(name, { history: 3 })
  for (const v of ['1', '2', '3']) await kv.put('k.a', v)
  await kv.put('k.b', 'b')
  const fed = await feed(name)
  try {
    await vi.waitFor(() => { expect(fed.initializedAfter).toBe(2) })
    expect(fed.changes.map((c) => [c.key, c.revision])).toEqual([['k.a', 3], ['k.b', 4]])
  } finally {
    fed.feed.stop()
  }
})

test('a feed from a revision starts there and is initialized at the stream\'s end', async () => {
  const { name, kv } = await bucket()
  for (let i = 0; i < 10; i++) await kv.put(`k.${i}`, `${i}`)
  const fed = await feed(name, { from: 6 })
  try {
    await vi.waitFor(() => { expect(fed.initializedAfter).toBe(5) })
    expect(fed.changes.map((c) => c.revision)).toEqual([6, 7, 8, 9, 10])
  } finally {
    fed.feed.stop()
  }
})

test('a feed whose last message was removed before it was delivered is initialized at the idle heartbeat that follows', async () => {
  const { name, kv } = await bucket()
  for (let i = 0; i < 3; i++) await kv.put(`k.${i}`, `${i}`)
  await kv.put('k.gone', 'x')
  // As if the stream's last message (read by stream info before the feed) were removed by hand before its delivery.
  await jsm.streams.deleteMessage(`KV_${name}`, 4)
  const fed = await feed(name, { endsAt: 4, heartbeatMs: 200 })
  try {
    await vi.waitFor(() => { expect(fed.initializedAfter).toBe(3) }, { timeout: 5000 })
    expect(fed.recreated).toEqual([])
  } finally {
    fed.feed.stop()
  }
})

test('a consumer the server lost is created again after the last revision fed: nothing lost, nothing twice', async () => {
  const { name, kv } = await bucket()
  await kv.put('k.1', '1')
  const fed = await feed(name, { heartbeatMs: 200 })
  try {
    await vi.waitFor(() => { expect(fed.initializedAfter).toBe(1) })
    const consumers = await jsm.consumers.list(`KV_${name}`).next()
    expect(consumers).toHaveLength(1)
    await jsm.consumers.delete(`KV_${name}`, consumers[0]?.name as string)
    await kv.put('k.2', '2')
    await vi.waitFor(() => { expect(fed.changes.map((c) => c.key)).toEqual(['k.1', 'k.2']) }, { timeout: 5000 })
    expect(fed.recreated).toEqual(['no message or heartbeat for two heartbeat intervals'])
    await kv.put('k.3', '3')
    await vi.waitFor(() => { expect(fed.changes.map((c) => c.revision)).toEqual([1, 2, 3]) })
  } finally {
    fed.feed.stop()
  }
  expect(await fed.feed.ended).toBeUndefined()
})

test('a feed whose consumer cannot be created fails to start, with the server\'s reason', async () => {
  await expect(feed('no-such-bucket')).rejects.toThrow(/stream not found/)
})
