// A rolling restart refuses nothing: a starting instance listens over HTTP at once (its /readyz 503)
// but joins the verb's queue group only once its views are read whole, so while it loads a bucket
// that takes seconds, its peer answers every request.

import type { NatsConnection } from 'nats'
import { createServer } from 'node:net'
import { once } from 'node:events'
import { beforeAll, expect, test } from 'vitest'
import { nodeName, nodesFor, seedMeshUnacked } from '../bench/mesh.js'
import type { NatsServer } from '../testkit/nats-server.js'
import { startTestService, suiteFixture } from './support/service.js'

/** Enough needs that loading them takes about a second here (~60k entries/s): the test polls /readyz every 10 ms meanwhile. */
const NEEDS = 60_000

const fx = suiteFixture()
let server: NatsServer
let admin: NatsConnection

beforeAll(async () => {
  server = await fx.server()
  admin = await fx.admin(server)
  await seedMeshUnacked(admin, nodesFor(NEEDS))
}, 120_000)

/** A port nothing listens on now, for an instance whose gateway the test must reach before its start resolves. */
async function freePort (): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1')
  await once(probe, 'listening')
  const { port } = probe.address() as { port: number }
  probe.close()
  return port
}

test('one of two instances restarted while requests flow: none is refused, and the new one joins once loaded', async () => {
  await fx.service(server)
  const b = await startTestService(server)

  const codes = new Map<number, number>()
  const flowing = new AbortController()
  const flow = async (): Promise<void> => {
    for (let i = 0; !flowing.signal.aborted; i++) {
      const msg = await admin.request('mesh-provisioner.provisioning', JSON.stringify({ what: 'needs', node: nodeName(i % 10), limit: 5 }), { timeout: 20_000 })
      const code = Number(msg.headers?.get('Nats-Service-Error-Code') ?? 200)
      codes.set(code, (codes.get(code) ?? 0) + 1)
    }
  }
  const requests = Promise.all(Array.from({ length: 4 }, flow))
  try {
    await expect.poll(() => codes.get(200) ?? 0).toBeGreaterThan(50)
    await b.stop()
    const port = await freePort()
    const starting = startTestService(server, { HTTP_PORT: String(port) })
    // The gateway listens while the views load, and says the verb is not served yet.
    await expect.poll(async () => {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`)
        return { status: res.status, body: await res.json() as { verb: string } }
      } catch {
        return undefined
      }
    }, { timeout: 20_000, interval: 10 }).toMatchObject({ status: 503, body: { verb: 'starting' } })
    const c = await starting
    fx.defer(async () => await c.stop())
    expect((await fetch(`${c.url}/readyz`)).status).toBe(200)
    const served = async (): Promise<number> => {
      const msg = await admin.request(`$SRV.STATS.mesh-provisioner.${c.bus.service.info().id}`, '', { timeout: 5000 })
      return (JSON.parse(msg.string()) as { endpoints: Array<{ num_requests: number }> }).endpoints[0]?.num_requests ?? 0
    }
    await expect.poll(served, { timeout: 20_000 }).toBeGreaterThan(10)
  } finally {
    flowing.abort()
    await requests
  }
  expect([...codes.keys()]).toEqual([200])
}, 120_000)
