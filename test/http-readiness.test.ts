// Readiness and answers while a bucket is missing or NATS is gone: 503 naming the bucket, the
// bucket served once it appears, /readyz following the connection.

import type { NatsConnection } from 'nats'
import { request } from 'undici'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { Running } from '../src/service.js'
import { NatsServer } from './support/nats-server.js'
import { startTestService, until, untilReady } from './support/service.js'

let server: NatsServer
let nc: NatsConnection
let running: Running

async function get (path: string): Promise<{ status: number, body: string }> {
  const res = await request(`${running.url}${path}`)
  return { status: res.statusCode, body: await res.body.text() }
}

beforeAll(async () => {
  server = await NatsServer.start()
  nc = await server.connect()
  const js = nc.jetstream()
  // The clients have created needs and applied, not yet collect.
  await (await js.views.kv('mesh-provisioner_needs', { history: 1 })).put('ace.gitea.secret.db-password', '{}')
  await js.views.kv('mesh-provisioner_applied', { history: 1 })
  running = await startTestService(server)
  await untilReady(running)
})

afterAll(async () => {
  await running?.stop()
  await nc?.close()
  await server?.dispose()
})

it('a missing bucket: ready (known absent), its answers 503 naming it, served once it appears', async () => {
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
  const served = await until(async () => { const got = await get('/v1/collect?node=ace'); return got.status === 200 ? got : undefined }, 10_000, 'collect served')
  expect(JSON.parse(served.body)).toMatchObject({ what: 'collect', total: 1, entries: [{ key: 'ace.environment.gitea', collection: 'environment' }] })
})

it('/readyz is 503 while NATS is gone, and 200 again once it is back', async () => {
  await server.kill()
  const down = await until(async () => { const got = await get('/readyz'); return got.status === 503 ? got : undefined }, 10_000, 'readyz 503')
  expect(JSON.parse(down.body)).toMatchObject({ ready: false, connected: false, buckets: { needs: { stale: true } } })
  await server.restart()
  await until(async () => (await get('/readyz')).status === 200, 20_000, 'readyz 200 again')
})
