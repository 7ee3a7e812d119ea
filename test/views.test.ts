// The views meeting the world: a bucket that appears late, an answer larger than the connection's
// max payload, and NATS killed and restarted under the service.

import { afterEach, describe, expect, test } from 'vitest'
import type { NatsConnection } from 'nats'
import { NatsServer } from './support/nats-server.js'
import { startTestService, until, untilReady } from './support/service.js'
import { askVerb } from './support/verb.js'
import { createClientBuckets } from '../scripts/sample-mesh.js'
import { BUCKETS, keyOf } from '../src/domain/buckets.js'
import type { Running } from '../src/service.js'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn()
  cleanup.length = 0
})

async function setup (opts: Parameters<typeof NatsServer.start>[0] = {}): Promise<{ server: NatsServer, nc: NatsConnection }> {
  const server = await NatsServer.start(opts)
  cleanup.push(() => server.dispose())
  const nc = await server.connect({ maxReconnectAttempts: -1, reconnectTimeWait: 100 })
  cleanup.push(() => nc.close())
  return { server, nc }
}

async function service (server: NatsServer): Promise<Running> {
  const svc = await startTestService(server)
  cleanup.push(() => svc.stop())
  return svc
}

test('a missing bucket is said (503, naming it) and served as soon as it appears', async () => {
  const { server, nc } = await setup()
  const svc = await service(server)
  await untilReady(svc)
  expect(svc.views.status().needs.state).toBe('absent')
  const refused = await askVerb(nc, { what: 'needs' })
  expect(refused.code).toBe(503)
  expect(refused.body.error).toEqual({ code: 'BUCKET_MISSING', message: expect.stringContaining(`bucket ${BUCKETS.needs} does not exist`) })

  const kv = await createClientBuckets(nc)
  await kv.needs.put('ace.gitea.secret.db-password', '{"file":"/run/x"}')
  const answer = await until(async () => {
    const r = await askVerb(nc, { what: 'needs' })
    return r.code === 200 && r.body.total === 1 ? r : undefined
  }, 5000, 'the needs bucket served')
  expect(answer.body.entries[0]).toMatchObject({ key: 'ace.gitea.secret.db-password', value: { file: '/run/x' } })
})

describe('an answer larger than the max payload', () => {
  test('is cut to fit, says so, and next pages to the end with every key exactly once', async () => {
    const { server, nc } = await setup({ config: 'max_payload: 8192' })
    const kv = await createClientBuckets(nc)
    const written: string[] = []
    for (let i = 0; i < 300; i++) {
      const key = keyOf('needs', { node: `n${i % 7}`, module: `m${i % 5}`, kind: 'secret', name: `s${i}` })
      written.push(key)
      await kv.needs.put(key, JSON.stringify({ padding: 'x'.repeat(100 + (i % 50)) }))
    }
    const svc = await service(server)
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
    const { server, nc } = await setup()
    const kv = await createClientBuckets(nc)
    for (const module of ['a', 'b', 'c']) await kv.applied.put(`n1.${module}`, '{}')
    const svc = await service(server)
    await untilReady(svc)
    const first = await askVerb(nc, { what: 'applied', limit: 2 })
    expect(first.body).toMatchObject({ total: 3, next: 'n1.b', cut: { reason: 'limit', omitted: 1 } })
    const second = await askVerb(nc, { what: 'applied', limit: 2, after: first.body.next })
    expect(second.body.entries.map((e: { key: string }) => e.key)).toEqual(['n1.c'])
    expect(second.body).not.toHaveProperty('cut')
  })
})

test('NATS killed and restarted: stale while down, nothing lost, an update visible within 2 s of the reconnect', async () => {
  const { server, nc } = await setup()
  const kv = await createClientBuckets(nc)
  await kv.applied.put('n1.gitea', '{"v":1}')
  const svc = await service(server)
  await untilReady(svc)

  await server.kill()
  await until(() => JSON.parse(svc.provisioning.ask({ what: 'applied', filter: {} }).json).stale, 5000, 'the answer to say stale')
  const whileDown = JSON.parse(svc.provisioning.ask({ what: 'applied', filter: {} }).json)
  expect(whileDown).toMatchObject({ stale: true, total: 1 })

  const reconnected = new Promise<number>((resolve) => {
    void (async () => {
      for await (const s of svc.nc.status()) if (s.type === 'reconnect') { resolve(Date.now()); break }
    })()
  })
  await server.restart()
  const at = await reconnected
  await until(() => !nc.isClosed() && nc.info !== undefined, 5000)
  await until(async () => { await kv.applied.put('n2.mail', '{"v":2}'); return true }, 5000, 'the test client to write again')
  const written = Date.now()
  const seen = await until(() => {
    const a = JSON.parse(svc.provisioning.ask({ what: 'applied', filter: {} }).json)
    return a.total === 2 ? a : undefined
  }, 4000, 'the update after restart')
  // Without resuming at the reconnect, the client library's heartbeat check would take ~12 s.
  expect(Date.now() - Math.max(at, written)).toBeLessThan(2000)
  expect(seen.stale).toBe(false)
  expect(seen.entries.map((e: { key: string }) => e.key)).toEqual(['n1.gitea', 'n2.mail'])
})

test('a watch whose consumer is lost is noticed (stale meanwhile) and followed again before the client library would', async () => {
  const { server, nc } = await setup()
  const kv = await createClientBuckets(nc)
  await kv.applied.put('n1.gitea', '{"v":1}')
  const svc = await service(server)
  await untilReady(svc)
  const jsm = await nc.jetstreamManager()
  const stream = `KV_${BUCKETS.applied}`
  for (const c of await jsm.consumers.list(stream).next()) await jsm.consumers.delete(stream, c.name)
  await kv.applied.put('n2.mail', '{"v":2}')
  const lost = Date.now()
  await until(() => svc.views.status().applied.stale, 3000, 'the view to say it is behind')
  await until(() => svc.views.status().applied.keys === 2, 5000, 'the write after the consumer was lost')
  // nats.js's own heartbeat check would take about 10 s; the view's look (every 0.5 s here) is sooner.
  expect(Date.now() - lost).toBeLessThan(5000)
  await until(() => !svc.views.status().applied.stale, 3000, 'the view to be current again')
})
