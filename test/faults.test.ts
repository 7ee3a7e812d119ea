// NATS faults the service must ride out: a SIGKILLed server restarted (stale answers while down, an
// update visible within 2 s of the reconnect, nothing lost), NATS not there yet at start, and the
// registry writer meeting a missing bucket and lost compare-and-sets without ever deleting a kind
// a domain answers.

import { KvWatchInclude, type KV, type NatsConnection } from 'nats'
import { request } from 'undici'
import { afterAll, afterEach, describe, expect, test } from 'vitest'
import { seedSampleMesh } from '../scripts/sample-mesh.js'
import { BUCKETS } from '../src/domain/buckets.js'
import { compileRegistry } from '../src/domain/registry.js'
import { DEFAULT_DOMAINS } from '../src/domain/registry-table.js'
import type { Running } from '../src/service.js'
import { freePort, NatsServer } from './support/nats-server.js'
import { startTestService, until, untilReady } from './support/service.js'

const compiled = compileRegistry(DEFAULT_DOMAINS)
const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn()
})
afterAll(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn()
})

async function serverFor (opts: { port?: number } = {}): Promise<NatsServer> {
  const server = await NatsServer.start(opts)
  cleanup.push(async () => await server.dispose())
  return server
}
async function adminOf (server: NatsServer): Promise<NatsConnection> {
  // The test's own hand reconnects fast, so its writes after a restart do not wait on it.
  const nc = await server.connect({ maxReconnectAttempts: -1, reconnectTimeWait: 50 })
  cleanup.push(async () => await nc.close())
  return nc
}
async function serviceOn (server: NatsServer, env: Record<string, string> = {}): Promise<Running> {
  const running = await startTestService(server, env)
  cleanup.push(async () => await running.stop())
  return running
}

async function get (running: Running, path: string): Promise<{ status: number, body: any }> {
  const res = await request(`${running.url}${path}`)
  return { status: res.statusCode, body: await res.body.json() }
}

/** The registry as stored: kind → [revision, bytes]. */
async function stored (kv: KV): Promise<Map<string, [number, string]>> {
  const keys: string[] = []
  for await (const k of await kv.keys()) keys.push(k)
  const out = new Map<string, [number, string]>()
  for (const k of keys) {
    const e = await kv.get(k)
    if (e?.operation === 'PUT') out.set(k, [e.revision, e.string()])
  }
  return out
}

function asCompiled (registry: Map<string, [number, string]>): Record<string, string> {
  return Object.fromEntries([...registry].map(([k, [, v]]) => [k, v]).sort())
}
const wanted = Object.fromEntries([...compiled].map(([k, { bytes }]) => [k, Buffer.from(bytes).toString()]).sort())

describe('NATS killed with SIGKILL and restarted', () => {
  test('answers carry stale: true and /readyz says why while it is down; after the restart nothing is lost and an update shows within 2 s of the reconnect', async () => {
    const server = await serverFor()
    const admin = await adminOf(server)
    await seedSampleMesh(admin)
    const running = await serviceOn(server)
    await untilReady(running)
    const before = await get(running, '/v1/needs?limit=10000')
    expect(before.body.stale).toBe(false)
    const needs = await admin.jetstream().views.kv(BUCKETS.needs, { bindOnly: true })

    await server.kill()
    const down = await until(async () => { const got = await get(running, '/v1/needs?limit=10000'); return got.body.stale === true ? got : undefined }, 10_000, 'a stale answer')
    expect(down.status).toBe(200)
    expect(down.body.entries).toEqual(before.body.entries)
    const ready = await get(running, '/readyz')
    expect(ready.status).toBe(503)
    expect(ready.body).toMatchObject({ ready: false, connected: false, buckets: { needs: { stale: true } } })

    let reconnectedAt = 0
    const statuses = (async () => {
      for await (const s of running.nc.status()) if (s.type === 'reconnect') { reconnectedAt = Date.now(); return }
    })()
    await server.restart()
    await statuses
    // JetStream may take a moment after the restart to take writes: the 2 s run from the later of
    // the service's reconnect and the write's acknowledgement.
    await until(async () => await needs.put('ace.gitea.secret.after-restart', '{"after":true}'), 10_000, 'the admin write after the restart')
    const writtenAt = Date.now()
    const seen = await until(async () => {
      const got = await get(running, '/v1/needs?node=ace&module=gitea&kind=secret')
      return got.body.stale === false && got.body.entries.some((e: { key: string }) => e.key === 'ace.gitea.secret.after-restart') && Date.now()
    }, 10_000, 'the update after the restart')
    expect(seen - Math.max(reconnectedAt, writtenAt)).toBeLessThan(2000)

    const after = await get(running, '/v1/needs?limit=10000')
    expect(after.body.entries.filter((e: { key: string }) => e.key !== 'ace.gitea.secret.after-restart')).toEqual(before.body.entries)
    expect((await get(running, '/readyz')).status).toBe(200)
  })
})

describe('NATS not there yet when the service starts', () => {
  test('the service waits for it, then serves and writes the registry', async () => {
    const port = await freePort()
    const { user, pass } = NatsServer.credentials('mesh-provisioner')
    // Not awaited: the start waits for a server that is not up yet.
    const starting = (async () => {
      const env = { NATS_URL: `nats://127.0.0.1:${port}`, NATS_USER: user, NATS_PASSWORD: pass }
      return await startTestService({ serviceEnv: () => env } as unknown as NatsServer)
    })()
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const server = await serverFor({ port })
    const running = await starting
    cleanup.push(async () => await running.stop())
    await untilReady(running)
    await until(() => running.writer.last?.ok, 15_000, 'a registry run that succeeds')
    const admin = await adminOf(server)
    expect(asCompiled(await stored(await admin.jetstream().views.kv(BUCKETS.registry, { bindOnly: true })))).toEqual(wanted)
  })
})

describe('the registry writer', () => {
  test('meeting a registry bucket it may not create, retries and converges once it appears', async () => {
    const server = await serverFor()
    const admin = await adminOf(server)
    const running = await serviceOn(server, { REGISTRY_CREATE_BUCKET: 'false' })
    await until(() => running.writer.last?.ok === false, 10_000, 'a failed registry run')
    expect(running.writer.last?.error).toBeTruthy()
    const kv = await admin.jetstream().views.kv(BUCKETS.registry, { history: 1 })
    await until(() => running.writer.last?.ok, 15_000, 'a registry run that succeeds after the bucket appeared')
    expect(asCompiled(await stored(kv))).toEqual(wanted)
  })

  test('meeting NATS down, it fails the run, tries again well before the next period, and converges', async () => {
    const server = await serverFor()
    const running = await serviceOn(server)
    await until(() => running.writer.last?.ok, 10_000, 'the first registry run')
    await server.kill()
    const failed = await running.writer.run()
    expect(failed.ok).toBe(false)
    expect(Date.parse(failed.nextAt as string) - Date.now()).toBeLessThan(60_000)
    await server.restart()
    const again = await until(() => running.writer.last?.ok === true ? running.writer.last : undefined, 30_000, 'a registry run that succeeds after the restart')
    expect(again.deleted).toEqual([])
    const admin = await adminOf(server)
    expect(asCompiled(await stored(await admin.jetstream().views.kv(BUCKETS.registry, { bindOnly: true })))).toEqual(wanted)
  })

  test('two writers losing compare-and-sets to each other converge, write each kind once, and never delete an answered kind', async () => {
    const server = await serverFor()
    const admin = await adminOf(server)
    const a = await serviceOn(server)
    const b = await serviceOn(server)
    await until(() => a.writer.last?.ok && b.writer.last?.ok, 15_000, 'both first runs')
    const kv = await admin.jetstream().views.kv(BUCKETS.registry, { bindOnly: true })
    // Someone tampers with every kind and adds one no domain answers.
    for (const kind of compiled.keys()) await kv.put(kind, '{"tampered":true}')
    await kv.put('retired', '{"kind":"retired"}')
    const deletes: string[] = []
    const watch = await kv.watch({ include: KvWatchInclude.UpdatesOnly })
    const watching = (async () => { for await (const e of watch) if (e.operation !== 'PUT') deletes.push(e.key) })()

    const [ra, rb] = await Promise.all([a.writer.run(), b.writer.run()])
    expect(ra.ok && rb.ok, `${ra.error ?? ''} ${rb.error ?? ''}`).toBe(true)
    expect([...ra.wrote, ...rb.wrote].sort()).toEqual([...compiled.keys()].sort())
    expect([...ra.deleted, ...rb.deleted]).toEqual(['retired'])
    await until(() => deletes.length >= 1, 5000, 'the delete marker')
    watch.stop()
    await watching
    expect(deletes).toEqual(['retired'])
    expect(asCompiled(await stored(kv))).toEqual(wanted)
  })
})
