// The verb as operators watch it: `$SRV.STATS` counts every refusal and failure it answers, and a
// subscription that ends under the service is logged, said by /readyz, and served again.

import type { NatsConnection } from 'nats'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { loadConfig, type Env } from '../src/config.js'
import { startService, type Running } from '../src/service.js'
import type { NatsServer } from '../testkit/nats-server.js'
import { seedSampleMesh } from '../testkit/sample-mesh.js'
import { request } from './support/http.js'
import { suiteFixture } from './support/service.js'
import { askVerb } from './support/verb.js'

const fx = suiteFixture()
let server: NatsServer
let nc: NatsConnection
beforeAll(async () => {
  server = await fx.server()
  nc = await fx.admin(server)
  await seedSampleMesh(nc)
})

/** The service with its log lines kept, for the test to read. */
async function start (env: Env = {}): Promise<{ running: Running, lines: Array<Record<string, unknown>> }> {
  const lines: Array<Record<string, unknown>> = []
  const config = loadConfig({ ...server.serviceEnv(), HTTP_PORT: '0', LOG_LEVEL: 'info', ...env })
  const log = pino({ level: 'info' }, { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>) } })
  const running = await startService({ config, log, version: '0.0.0-test', viewRetryMs: 100, viewCheckMs: 500, registryRetryMs: 200 })
  return { running, lines }
}

async function readyz (running: Running): Promise<{ status: number, body: { ready: boolean, verb: string } }> {
  const res = await request(`${running.url}/readyz`)
  return { status: res.statusCode, body: await res.body.json() as { ready: boolean, verb: string } }
}

interface EndpointStats { num_requests: number, num_errors: number, last_error?: string }

async function stats (running: Running): Promise<EndpointStats> {
  const msg = await nc.request(`$SRV.STATS.mesh-provisioner.${running.bus.service.info().id}`, '', { timeout: 2000 })
  return (JSON.parse(msg.string()) as { endpoints: EndpointStats[] }).endpoints[0] as EndpointStats
}

describe('$SRV.STATS', () => {
  let running: Running
  beforeAll(async () => { running = (await start()).running })
  afterAll(async () => { await running?.stop() })

  test('counts every refusal the verb answers, and says the last, while each reply keeps its headers and JSON body', async () => {
    const before = await stats(running)
    expect(before.num_errors).toBe(0)
    const refusals = [{ what: 'everything' }, '{not json', { what: 'needs', node: 'a.b' }]
    for (const request of refusals) {
      const reply = await askVerb(nc, request)
      expect(reply.code).toBe(400)
      expect(reply.body).toEqual({ error: expect.objectContaining({ code: 'BAD_REQUEST', message: reply.error }) })
    }
    expect((await askVerb(nc, { what: 'needs', node: 'ace' })).code).toBe(200)
    const after = await stats(running)
    expect(after.num_requests).toBe(before.num_requests + 4)
    expect(after.num_errors).toBe(3)
    expect(after.last_error).toMatch(/^400 BAD_REQUEST: node: "a\.b" will not do/)
  })

  test('a bucket not ready is counted too: 503, said as such', async () => {
    const before = await stats(running)
    await nc.jetstream().views.kv('mesh-provisioner_applied').then(async (kv) => { await kv.destroy() })
    await expect.poll(async () => (await askVerb(nc, { what: 'applied' })).code, { timeout: 10_000 }).toBe(503)
    const after = await stats(running)
    expect(after.num_errors).toBeGreaterThan(before.num_errors)
    expect(after.last_error).toMatch(/^503 BUCKET_MISSING: bucket mesh-provisioner_applied does not exist/)
  })
})

describe('a verb whose subscription ends under the service', () => {
  test('is logged, said by /readyz, and served again', async () => {
    const { running, lines } = await start()
    try {
      expect(await readyz(running)).toMatchObject({ status: 200, body: { ready: true, verb: 'serving' } })
      const first = running.bus.service
      // As nats.js does when the subscription fails: the micro service stops, from outside the bus.
      await first.stop()
      await expect.poll(async () => await readyz(running)).toMatchObject({ status: 503, body: { ready: false, verb: 'down' } })
      expect(lines).toContainEqual(expect.objectContaining({ level: 50, msg: expect.stringMatching(/^the verb is not served: its subscription ended under it; serving it again in \d+ ms$/) }))
      await expect.poll(async () => (await readyz(running)).status, { timeout: 5000 }).toBe(200)
      expect(running.bus.service).not.toBe(first)
      expect((await askVerb(nc, { what: 'needs', node: 'ace' })).code).toBe(200)
      const ping = await nc.request('$SRV.PING.mesh-provisioner', '', { timeout: 2000 })
      expect(JSON.parse(ping.string())).toMatchObject({ id: running.bus.service.info().id })
      expect(lines).toContainEqual(expect.objectContaining({ msg: 'the verb is served again' }))
    } finally {
      await running.stop()
    }
  })

  test('a subject the service may not subscribe to: the verb is down, said and logged, never a healthy-looking process', async () => {
    const { running, lines } = await start({ PROVISIONING_SUBJECT: 'mesh-provisioner.elsewhere' })
    try {
      await expect.poll(async () => await readyz(running)).toMatchObject({ status: 503, body: { ready: false, verb: 'down' } })
      expect(lines).toContainEqual(expect.objectContaining({
        level: 50,
        msg: expect.stringMatching(/^the verb is not served/),
        err: expect.objectContaining({ message: expect.stringMatching(/permissions violation/i) })
      }))
    } finally {
      await running.stop()
    }
  })
})
