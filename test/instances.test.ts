// Two instances on one NATS: the verb's queue group shares the requests between them, both answer
// alike, and the registry's revisions stay put when the second starts and at either's periodic run.

import type { NatsConnection } from 'nats'
import { beforeAll, expect, test, vi } from 'vitest'
import { seedSampleMesh } from '../testkit/sample-mesh.js'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import type { Running } from '../src/service.js'
import type { NatsServer } from '../testkit/nats-server.js'
import { suiteFixture, untilReady, untilWritten } from './support/service.js'
import { requestVerb } from './support/verb.js'

const fx = suiteFixture()
let server: NatsServer
let admin: NatsConnection
const instances: Running[] = []

beforeAll(async () => {
  server = await fx.server()
  admin = await fx.admin(server)
  await seedSampleMesh(admin)
})

async function registryLastSeq (): Promise<number> {
  const jsm = await admin.jetstreamManager()
  return (await jsm.streams.info(`KV_${BUCKETS.registry}`)).state.last_seq
}

/** Waits until `running`'s writer has completed `n` more runs. */
async function runs (running: Running, n: number): Promise<void> {
  const seen = new Set<string>()
  await vi.waitFor(() => {
    const last = running.writer.last
    if (last?.ok) seen.add(last.at)
    expect(seen.size, `${n} more registry runs`).toBeGreaterThan(n)
  }, { timeout: 20_000, interval: 50 })
}

test('the registry\'s revisions do not move when a second instance starts, nor at either\'s periodic run', async () => {
  const a = await fx.service(server, { REGISTRY_INTERVAL: '1s' })
  instances.push(a)
  await untilReady(a)
  await untilWritten(a)
  const written = await registryLastSeq()
  expect(a.writer.last?.wrote).toHaveLength(13)

  const b = await fx.service(server, { REGISTRY_INTERVAL: '1s' })
  instances.push(b)
  await untilReady(b)
  await Promise.all([runs(a, 2), runs(b, 2)])
  expect(b.writer.last).toMatchObject({ ok: true, wrote: [], deleted: [] })
  expect(a.writer.last).toMatchObject({ ok: true, wrote: [], deleted: [] })
  expect(await registryLastSeq()).toBe(written)
})

test('the verb\'s requests are shared between the two, and both answer alike', async () => {
  const ask = async (): Promise<string> => {
    const msg = await requestVerb(admin, '{"what":"needs","node":"ace"}')
    expect(msg.headers?.get('Nats-Service-Error-Code') ?? '').toBe('')
    return msg.string()
  }
  const answers = new Set<string>()
  for (let i = 0; i < 100; i++) answers.add(await ask())
  expect(answers.size).toBe(1)

  const stats = []
  for await (const s of await admin.services.client().stats('mesh-provisioner')) stats.push(s)
  expect(stats).toHaveLength(2)
  for (const s of stats) {
    const endpoint = s.endpoints?.find((e) => e.name === 'provisioning')
    expect(endpoint?.queue_group).toBe('mesh-provisioner')
    // A queue group picks at random: out of 100, each instance gets some (a miss is 2^-99 likely).
    expect(endpoint?.num_requests).toBeGreaterThan(0)
  }
  expect(stats.reduce((n, s) => n + (s.endpoints?.[0]?.num_requests ?? 0), 0)).toBe(100)
  // micro's num_errors stays 0 here whatever happens (the service answers its errors itself): each
  // instance's own count says what it answered, every one ok, as many as micro saw it take.
  const counted = await Promise.all(instances.map(async (r) => {
    const values = (await r.metrics.registry.getSingleMetric('mesh_provisioner_requests_total')?.get())?.values ?? []
    return values.filter((v) => v.labels['face'] === 'bus').map((v) => `${String(v.labels['outcome'])} ${v.value}`)
  }))
  const taken = stats.map((s) => [`ok ${s.endpoints?.[0]?.num_requests ?? 0}`])
  expect(counted.sort()).toEqual(taken.sort())
})
