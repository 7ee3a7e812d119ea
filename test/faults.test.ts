// NATS faults the service must ride out: a SIGKILLed server restarted (stale answers while down, an
// update visible soon after the reconnect, nothing lost), NATS not there yet at start, and the
// registry writer meeting a missing bucket and lost compare-and-sets without ever deleting a kind
// a domain answers.

import { KvWatchInclude, type KV } from 'nats'
import { request } from './support/http.js'
import { describe, expect, test, vi } from 'vitest'
import { seedSampleMesh } from '../testkit/sample-mesh.js'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import { compileRegistry } from '../src/domain/registry/registry.js'
import { DEFAULT_DOMAINS } from '../src/domain/registry/registry-table.js'
import type { Running } from '../src/service.js'
import { fixture, killAndRestart, untilRan, untilReady, untilWritten, UPDATE_AFTER_RECONNECT_MS } from './support/service.js'

const compiled = compileRegistry(DEFAULT_DOMAINS)

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
  test('answers carry stale: true and /readyz says why while it is down; after the restart nothing is lost and an update shows soon after the reconnect', async () => {
    const fx = fixture()
    const server = await fx.server()
    const admin = await fx.admin(server)
    await seedSampleMesh(admin)
    const running = await fx.service(server)
    await untilReady(running)
    const before = await get(running, '/v1/needs?limit=10000')
    expect(before.body.stale).toBe(false)
    const needs = await admin.jetstream().views.kv(BUCKETS.needs, { bindOnly: true })

    await killAndRestart(server, {
      reconnecting: [running.nc],
      whileDown: async () => {
        const down = await vi.waitFor(async () => {
          const got = await get(running, '/v1/needs?limit=10000')
          expect(got.body.stale, 'a stale answer').toBe(true)
          return got
        }, { timeout: 10_000, interval: 50 })
        expect(down.status).toBe(200)
        expect(down.body.entries).toEqual(before.body.entries)
        const ready = await get(running, '/readyz')
        expect(ready.status).toBe(503)
        expect(ready.body).toMatchObject({ ready: false, connected: false, buckets: { needs: { stale: true } } })
      }
    })
    // JetStream may take a moment after the restart to take writes: retried until it does.
    await vi.waitFor(async () => await needs.put('ace.gitea.secret.after-restart', '{"after":true}'), { timeout: 10_000, interval: 50 })
    await vi.waitFor(async () => {
      const got = await get(running, '/v1/needs?node=ace&module=gitea&kind=secret')
      expect(got.body.stale).toBe(false)
      expect(got.body.entries.map((e: { key: string }) => e.key)).toContain('ace.gitea.secret.after-restart')
    }, { timeout: UPDATE_AFTER_RECONNECT_MS, interval: 50 })

    const after = await get(running, '/v1/needs?limit=10000')
    expect(after.body.entries.filter((e: { key: string }) => e.key !== 'ace.gitea.secret.after-restart')).toEqual(before.body.entries)
    expect((await get(running, '/readyz')).status).toBe(200)
  })
})

describe('NATS not there yet when the service starts', () => {
  test('the service waits for it, then serves and writes the registry', async () => {
    const fx = fixture()
    // Started and stopped first, so that its port is known; it comes back on it below.
    const server = await fx.server()
    await server.stop()
    const logs: string[] = []
    // Not awaited: the start waits for a server that is not up yet.
    const starting = fx.service(server, { LOG_LEVEL: 'warn' }, { onLog: (line) => logs.push(line) })
    await expect.poll(() => logs.join(''), { timeout: 10_000 }).toContain('NATS is not reachable yet')
    await server.restart()
    const running = await starting
    await untilReady(running)
    await untilWritten(running, 15_000)
    const admin = await fx.admin(server)
    expect(asCompiled(await stored(await admin.jetstream().views.kv(BUCKETS.registry, { bindOnly: true })))).toEqual(wanted)
  })
})

describe('the registry writer', () => {
  test('meeting a registry bucket it may not create, retries and converges once it appears', async () => {
    const fx = fixture()
    const server = await fx.server()
    const admin = await fx.admin(server)
    const running = await fx.service(server, { REGISTRY_CREATE_BUCKET: 'false' })
    expect(await untilRan(running)).toMatchObject({ ok: false, error: expect.any(String) })
    const kv = await admin.jetstream().views.kv(BUCKETS.registry, { history: 1 })
    await untilWritten(running, 15_000)
    expect(asCompiled(await stored(kv))).toEqual(wanted)
  })

  test('meeting NATS down, it fails the run at once, plans a retry well before the next period, and converges as soon as NATS is back', async () => {
    const fx = fixture()
    const server = await fx.server()
    // A retry 30 s after a failure: converging sooner than that is the reconnect's doing.
    const running = await fx.service(server, {}, { registryRetryMs: 30_000 })
    await untilWritten(running)
    let plannedRetry = ''
    await killAndRestart(server, {
      whileDown: async () => {
        await vi.waitFor(() => { expect(running.views.connected()).toBe(false) }, { timeout: 10_000, interval: 20 })
        const failed = await running.writer.run()
        expect(failed).toMatchObject({ ok: false, error: expect.stringMatching(/NATS is not connected; the run is tried again as soon as it reconnects/) })
        // At once, not after its requests' timeout (5 s).
        expect(failed.durationMs).toBeLessThan(1000)
        // The retry is planned from the run itself, not from the clock when this line runs.
        expect(Date.parse(failed.nextAt as string) - Date.parse(failed.at)).toBeLessThan(60_000)
        plannedRetry = failed.nextAt as string
      }
    })
    const again = await untilWritten(running, 15_000)
    // Before the retry its backoff planned: the reconnect started it.
    expect(Date.parse(again.at)).toBeLessThan(Date.parse(plannedRetry))
    expect(again.deleted).toEqual([])
    const admin = await fx.admin(server)
    expect(asCompiled(await stored(await admin.jetstream().views.kv(BUCKETS.registry, { bindOnly: true })))).toEqual(wanted)
  })

  test('two writers losing compare-and-sets to each other converge, write each kind once, and never delete an answered kind', async () => {
    const fx = fixture()
    const server = await fx.server()
    const admin = await fx.admin(server)
    const a = await fx.service(server)
    const b = await fx.service(server)
    await Promise.all([untilWritten(a, 15_000), untilWritten(b, 15_000)])
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
    await expect.poll(() => deletes.length, { timeout: 5000 }).toBeGreaterThanOrEqual(1)
    watch.stop()
    await watching
    expect(deletes).toEqual(['retired'])
    expect(asCompiled(await stored(kv))).toEqual(wanted)
  })
})
