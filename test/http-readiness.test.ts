// Readiness and answers while a bucket is missing or NATS is gone: 503 naming the bucket, the
// bucket served once it appears, /readyz following the connection.

import type { NatsConnection } from 'nats'
import { request } from './support/http.js'
import { beforeAll, expect, test, vi } from 'vitest'
import type { Running } from '../src/service.js'
import type { NatsServer } from '../testkit/nats-server.js'
import { killAndRestart, suiteFixture, untilReady } from './support/service.js'

const fx = suiteFixture()
let server: NatsServer
let nc: NatsConnection
let running: Running

async function get (path: string): Promise<{ status: number, body: string }> {
  const res = await request(`${running.url}${path}`)
  return { status: res.statusCode, body: await res.body.text() }
}

beforeAll(async () => {
  server = await fx.server()
  nc = await fx.admin(server)
  const js = nc.jetstream()
  // The clients have created needs and applied, not yet collect.
  await (await js.views.kv('mesh-provisioner_needs', { history: 1 })).put('ace.gitea.secret.db-password', '{}')
  await js.views.kv('mesh-provisioner_applied', { history: 1 })
  running = await fx.service(server)
  await untilReady(running)
})

test('a missing bucket: ready (known absent), its answers 503 naming it, served once it appears', async () => {
  const ready = await get('/readyz')
  expect(ready.status).toBe(200)
  expect(JSON.parse(ready.body)).toMatchObject({
    ready: true,
    connected: true,
    buckets: { collect: { bucket: 'mesh-provisioner_collect', state: 'absent', keys: 0, revision: 0, outOfShape: 0 }, needs: { state: 'live', keys: 1 } }
  })
  const missing = await get('/v1/collect?node=ace')
  expect(missing).toEqual({
    status: 503,
    body: JSON.stringify({ error: { code: 'BUCKET_MISSING', message: 'bucket mesh-provisioner_collect does not exist; the provisioner clients create it, and the service serves it as soon as it appears' } })
  })
  expect((await get('/v1/needs')).status).toBe(200)

  const collect = await nc.jetstream().views.kv('mesh-provisioner_collect', { history: 1 })
  await collect.put('ace.environment.gitea', '{"GITEA_URL":"https://gitea.ace.internal"}')
  const served = await vi.waitFor(async () => {
    const got = await get('/v1/collect?node=ace')
    expect(got.status, 'collect served').toBe(200)
    return got
  }, { timeout: 10_000, interval: 50 })
  expect(JSON.parse(served.body)).toMatchObject({ what: 'collect', total: 1, entries: [{ key: 'ace.environment.gitea', collection: 'environment' }] })
})

test('/readyz is 503 while NATS is gone, and 200 again once it is back', async () => {
  await killAndRestart(server, {
    whileDown: async () => {
      const down = await vi.waitFor(async () => {
        const got = await get('/readyz')
        expect(got.status, 'readyz 503').toBe(503)
        return got
      }, { timeout: 10_000, interval: 50 })
      expect(JSON.parse(down.body)).toMatchObject({ ready: false, connected: false, buckets: { needs: { stale: true } } })
    }
  })
  await expect.poll(async () => (await get('/readyz')).status, { timeout: 20_000 }).toBe(200)
  // A not-ready answer is no fault of the service's: counted as NOT_READY, never INTERNAL.
  const counted = (await running.metrics.registry.getSingleMetricAsString('mesh_provisioner_requests_total')).split('\n').filter((l) => l.includes('route="/readyz"'))
  expect(counted.some((l) => l.includes('outcome="NOT_READY"'))).toBe(true)
  expect(counted.some((l) => l.includes('outcome="INTERNAL"'))).toBe(false)
})
