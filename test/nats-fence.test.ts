// What src/domain/follow/nats-fence.ts reads of nats.js's private fields and of the JetStream
// protocol, held against a real nats-server: an upgrade of nats.js or of the server that moves one
// fails here, by name, instead of degrading the service quietly.

import { AckPolicy, createInbox, DeliverPolicy, nanos, nuid, type Msg, type NatsConnection } from 'nats'
import { beforeAll, expect, test } from 'vitest'
import { arrivedBytes, endpointErrorCounter, isStreamNotFound, isWrongLastSequence, operationOf, readDelivery, readStatus, type Delivery } from '../src/domain/follow/nats-fence.js'
import { suiteFixture } from './support/service.js'

const fx = suiteFixture()
let nc: NatsConnection

beforeAll(async () => {
  nc = await fx.admin(await fx.server())
})

const utf8 = new TextDecoder()

/** The next message on `subject` after `send` runs. */
async function received (subject: string, send: () => void): Promise<Msg> {
  return await new Promise<Msg>((resolve, reject) => {
    const sub = nc.subscribe(subject, { max: 1, callback: (err, msg) => { if (err === null) resolve(msg); else reject(err) } })
    void nc.flush().then(send).catch(reject)
    void sub.closed.catch(reject)
  })
}

test('arrivedBytes gives a delivered message\'s subject and reply subject as the bytes that came', async () => {
  const msg = await received('fence.k=3A.1', () => { nc.publish('fence.k=3A.1', 'x', { reply: 'fence.reply.1' }) })
  const raw = arrivedBytes(msg)
  expect(raw.subject).toBeInstanceOf(Uint8Array)
  expect(utf8.decode(raw.subject)).toBe('fence.k=3A.1')
  expect(raw.reply).toBeInstanceOf(Uint8Array)
  expect(utf8.decode(raw.reply)).toBe('fence.reply.1')
})

test('arrivedBytes gives no reply bytes for a message without a reply subject', async () => {
  const msg = await received('fence.plain', () => { nc.publish('fence.plain', 'x') })
  expect(utf8.decode(arrivedBytes(msg).subject)).toBe('fence.plain')
  expect(arrivedBytes(msg).reply ?? new Uint8Array(0)).toHaveLength(0)
})

test('endpointErrorCounter counts an error reply in the endpoint\'s $SRV.STATS, num_errors and last_error', async () => {
  const service = await nc.services.add({ name: 'fence', version: '0.0.1' })
  fx.defer(async () => await service.stop())
  service.addEndpoint('answers', { subject: 'fence.answers', handler: (_err, msg) => { msg.respond() } })
  const count = endpointErrorCounter(service, 'answers')
  count(new Error('400 BAD_REQUEST: the first'))
  count(new Error('503 NOT_READY: the second'))
  const stats = []
  for await (const s of await nc.services.client().stats('fence')) stats.push(s)
  expect(stats).toHaveLength(1)
  expect(stats[0]?.endpoints?.[0]).toMatchObject({ name: 'answers', num_errors: 2, last_error: '503 NOT_READY: the second' })
})

test('endpointErrorCounter refuses, naming the endpoint, where it finds no stats', async () => {
  const service = await nc.services.add({ name: 'fence-none', version: '0.0.1' })
  fx.defer(async () => await service.stop())
  expect(() => endpointErrorCounter(service, 'absent')).toThrow(/endpoint absent .*src\/domain\/follow\/nats-fence\.ts/)
})

/** The messages a push consumer of `bucket`'s stream delivers to an inbox of its own, from the first, with heartbeats every 100 ms, until `enough` says so. */
async function delivered (bucket: string, enough: (msgs: Msg[]) => boolean): Promise<Msg[]> {
  const inbox = createInbox()
  const msgs: Msg[] = []
  await new Promise<void>((resolve, reject) => {
    const sub = nc.subscribe(inbox, { callback: (err, msg) => { if (err !== null) return reject(err); msgs.push(msg); if (enough(msgs)) { sub.unsubscribe(); resolve() } } })
    void nc.jetstreamManager().then(async (jsm) => await jsm.consumers.add(`KV_${bucket}`, {
      name: nuid.next(), deliver_subject: inbox, ack_policy: AckPolicy.None, flow_control: true, idle_heartbeat: nanos(100), deliver_policy: DeliverPolicy.All, mem_storage: true
    })).catch(reject)
  })
  return msgs
}

test('readDelivery reads a real delivery\'s reply subject: its revision, its consumer sequence, when it was stored; operationOf its put or deletion', async () => {
  const kv = await nc.jetstream().views.kv('fence-delivery')
  const before = Date.now()
  const put = await kv.put('a.b', '{}')
  // Another key deleted: a bucket keeps one message a key, so a.b's deletion would replace its put.
  await kv.put('a.c', '{}')
  await kv.delete('a.c')
  const deliveries = (m: Msg[]): Msg[] => m.filter((msg) => readStatus(msg) === undefined)
  const msgs = deliveries(await delivered('fence-delivery', (m) => deliveries(m).length >= 2))
  const read = msgs.map((msg) => {
    const d: Delivery = { streamSeq: 0, consumerSeq: 0, ms: 0, nanos: 0, pending: 0 }
    expect(readDelivery(arrivedBytes(msg).reply, d), msg.reply).toBe(true)
    return { ...d, operation: operationOf(msg) }
  })
  expect(read.map((d) => [d.streamSeq, d.consumerSeq, d.operation])).toEqual([[put, 1, 'PUT'], [put + 2, 2, 'DEL']])
  for (const d of read) expect(d.ms).toBeGreaterThanOrEqual(before - 1000)
  expect(read[0]?.pending).toBe(1)
})

test('readStatus reads a real idle heartbeat: the last consumer sequence delivered, no stalled subject', async () => {
  const kv = await nc.jetstream().views.kv('fence-heartbeat')
  await kv.put('a.b', '{}')
  const msgs = await delivered('fence-heartbeat', (m) => m.some((msg) => readStatus(msg) !== undefined))
  expect(readStatus(msgs.at(-1) as Msg)).toEqual({ type: 'heartbeat', lastConsumerSeq: 1, stalled: '' })
  expect(readStatus(msgs[0] as Msg)).toBeUndefined()
})

test('the JetStream API error codes the domain acts on are the server\'s: a stream not found, a compare-and-set lost', async () => {
  const jsm = await nc.jetstreamManager()
  expect(isStreamNotFound(await jsm.streams.info('KV_fence-absent').catch((err: unknown) => err))).toBe(true)
  const kv = await nc.jetstream().views.kv('fence-cas')
  const revision = await kv.put('k', '1')
  await kv.put('k', '2')
  const lost = await kv.update('k', '3', revision).catch((err: unknown) => err)
  expect([isWrongLastSequence(lost), isStreamNotFound(lost)]).toEqual([true, false])
})
