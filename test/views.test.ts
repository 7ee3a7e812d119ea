// The views meeting the world: a bucket that appears late, an answer larger than the connection's
// max payload, and NATS killed and restarted under the service.

import { describe, expect, test, vi } from 'vitest'
import type { NatsConnection } from 'nats'
import type { NatsServer, NatsServerOptions } from '../testkit/nats-server.js'
import { fixture, killAndRestart, untilReady, UPDATE_AFTER_RECONNECT_MS, type Fixture } from './support/service.js'
import { askVerb } from './support/verb.js'
import { createClientBuckets } from '../testkit/sample-mesh.js'
import { BUCKETS, keyOf } from '../src/domain/wire/key-shapes.js'

async function setup (opts: NatsServerOptions = {}): Promise<{ fx: Fixture, server: NatsServer, nc: NatsConnection }> {
  const fx = fixture()
  const server = await fx.server(opts)
  return { fx, server, nc: await fx.admin(server) }
}

test('a missing bucket is said (503, naming it) and served as soon as it appears', async () => {
  const { fx, server, nc } = await setup()
  const svc = await fx.service(server)
  await untilReady(svc)
  expect(svc.views.status().needs.state).toBe('absent')
  const refused = await askVerb(nc, { what: 'needs' })
  expect(refused.code).toBe(503)
  expect(refused.body.error).toEqual({ code: 'BUCKET_MISSING', message: expect.stringContaining(`bucket ${BUCKETS.needs} does not exist`) })

  const kv = await createClientBuckets(nc)
  await kv.needs.put('ace.gitea.secret.db-password', '{"file":"/run/x"}')
  const answer = await vi.waitFor(async () => {
    const r = await askVerb(nc, { what: 'needs' })
    expect([r.code, r.body.total], 'the needs bucket served').toEqual([200, 1])
    return r
  }, { timeout: 5000, interval: 50 })
  expect(answer.body.entries[0]).toMatchObject({ key: 'ace.gitea.secret.db-password', value: { file: '/run/x' } })
})

describe('an answer larger than the max payload', () => {
  test('is cut to fit, says so, and next pages to the end with every key exactly once', async () => {
    const { fx, server, nc } = await setup({ config: 'max_payload: 8192' })
    const kv = await createClientBuckets(nc)
    const written: string[] = []
    for (let i = 0; i < 300; i++) {
      const key = keyOf('needs', { node: `n${i % 7}`, module: `m${i % 5}`, kind: 'secret', name: `s${i}` })
      written.push(key)
      await kv.needs.put(key, JSON.stringify({ padding: 'x'.repeat(100 + (i % 50)) }))
    }
    const svc = await fx.service(server)
    await untilReady(svc)
    const seen: string[] = []
    let after: string | undefined
    let pages = 0
    for (;;) {
      const reply = await askVerb(nc, { what: 'needs', ...(after === undefined ? {} : { after }) })
      pages++
      expect(reply.code).toBe(200)
      expect(reply.bytes).toBeLessThanOrEqual(8192)
      expect(reply.body.total).toBe(300)
      seen.push(...reply.body.entries.map((e: { key: string }) => e.key))
      if (!reply.body.cut) break
      expect(reply.body.cut).toEqual({ reason: 'payload', omitted: 300 - seen.length })
      expect(reply.body.next).toBe(seen.at(-1))
      after = reply.body.next
      expect(pages).toBeLessThan(100)
    }
    expect(pages).toBeGreaterThan(3)
    expect(seen).toEqual([...written].sort())
  })

  test('limit cuts too, and says so', async () => {
    const { fx, server, nc } = await setup()
    const kv = await createClientBuckets(nc)
    for (const module of ['a', 'b', 'c']) await kv.applied.put(`n1.${module}`, '{}')
    const svc = await fx.service(server)
    await untilReady(svc)
    const first = await askVerb(nc, { what: 'applied', limit: 2 })
    expect(first.body).toMatchObject({ total: 3, next: 'n1.b', cut: { reason: 'limit', omitted: 1 } })
    const second = await askVerb(nc, { what: 'applied', limit: 2, after: first.body.next })
    expect(second.body.entries.map((e: { key: string }) => e.key)).toEqual(['n1.c'])
    expect(second.body).not.toHaveProperty('cut')
  })
})

test('NATS killed and restarted: stale while down, nothing lost, an update visible soon after the reconnect', async () => {
  const { fx, server, nc } = await setup()
  const kv = await createClientBuckets(nc)
  await kv.applied.put('n1.gitea', '{"v":1}')
  const svc = await fx.service(server)
  await untilReady(svc)
  const applied = (): any => JSON.parse(svc.provisioning.ask({ what: 'applied', filter: {} }).json)

  await killAndRestart(server, {
    reconnecting: [svc.nc, nc],
    whileDown: async () => {
      await expect.poll(applied, { timeout: 5000 }).toMatchObject({ stale: true, total: 1 })
    }
  })
  await vi.waitFor(async () => await kv.applied.put('n2.mail', '{"v":2}'), { timeout: 5000, interval: 50 })
  const seen = await vi.waitFor(() => {
    const a = applied()
    expect(a.total, 'the update after the restart').toBe(2)
    return a
  }, { timeout: UPDATE_AFTER_RECONNECT_MS, interval: 20 })
  expect(seen.stale).toBe(false)
  expect(seen.entries.map((e: { key: string }) => e.key)).toEqual(['n1.gitea', 'n2.mail'])
})

test('a watch whose consumer is lost is noticed (stale meanwhile) and followed again before the client library would', async () => {
  const { fx, server, nc } = await setup()
  const kv = await createClientBuckets(nc)
  await kv.applied.put('n1.gitea', '{"v":1}')
  const svc = await fx.service(server)
  await untilReady(svc)
  const jsm = await nc.jetstreamManager()
  const stream = `KV_${BUCKETS.applied}`
  for (const c of await jsm.consumers.list(stream).next()) await jsm.consumers.delete(stream, c.name)
  await kv.applied.put('n2.mail', '{"v":2}')
  await expect.poll(() => svc.views.status().applied.stale, { timeout: 5000 }).toBe(true)
  // nats.js's own heartbeat check would take about 10 s; the view's look (every 0.5 s here) is far
  // sooner: 5 s tells the two apart with room for a busy machine.
  await expect.poll(() => svc.views.status().applied.keys, { timeout: 5000 }).toBe(2)
  await expect.poll(() => svc.views.status().applied.stale, { timeout: 5000 }).toBe(false)
})
