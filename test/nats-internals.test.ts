// What src/domain/nats-internals.ts reads of nats.js's private fields, held against a real nats-server: a
// nats.js upgrade that moves one fails here, by name, instead of degrading the service quietly.

import type { Msg, NatsConnection } from 'nats'
import { beforeAll, expect, test } from 'vitest'
import { arrivedBytes, endpointErrorCounter } from '../src/domain/nats-internals.js'
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
  expect(() => endpointErrorCounter(service, 'absent')).toThrow(/endpoint absent .*src\/domain\/nats-internals\.ts/)
})
