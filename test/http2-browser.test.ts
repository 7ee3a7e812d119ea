// A browser over HTTP/2 (docs/access.md), Debian's Chromium through playwright-core: on a gateway serving
// TLS with a certificate the test makes, a page holds more event streams than the six connections
// HTTP/1.1 gives an origin, all over one HTTP/2 connection, and each follows its node live.

import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { NatsConnection } from 'nats'
import type { Browser } from 'playwright-core'
import { beforeAll, describe, expect, test } from 'vitest'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import type { Running } from '../src/service.js'
import { seedSampleMesh } from '../testkit/sample-mesh.js'
import { chromiumPresent, connectChromium } from './support/browser.js'
import { selfSigned } from './support/certificate.js'
import { suiteFixture, untilReady } from './support/service.js'

/** More than the six connections a browser opens to one origin over HTTP/1.1. */
const STREAMS = 10

describe.skipIf(!chromiumPresent)('a browser over HTTP/2', () => {
  const fx = suiteFixture()
  let nc: NatsConnection
  let running: Running
  let browser: Browser

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-h2-browser-'))
    const { certFile, keyFile } = selfSigned(dir)
    const server = await fx.server()
    nc = await fx.admin(server)
    await seedSampleMesh(nc)
    running = await fx.service(server, { HTTP_TLS_CERT: certFile, HTTP_TLS_KEY: keyFile })
    await untilReady(running)
    browser = await connectChromium(fx)
  }, 60_000)

  test(`holds ${STREAMS} event streams from one page, over HTTP/2, each following its own changes`, async () => {
    // The certificate is the test's own: the browser is told to take it, as a browser that trusts its issuer would.
    const context = await browser.newContext({ ignoreHTTPSErrors: true })
    fx.defer(async () => await context.close())
    const page = await context.newPage()
    await page.goto(`${running.url}/healthz`)
    // In the page (the test's TypeScript has no DOM types: the page's globals are reached as any).
    expect(await page.evaluate(() => (globalThis as any).performance.getEntriesByType('navigation')[0].nextHopProtocol)).toBe('h2')
    await page.evaluate((n) => {
      const w = globalThis as any
      w.synced = 0
      w.puts = []
      for (let i = 0; i < n; i++) {
        const events = new w.EventSource(`/v1/applied/events?node=h2node${i}`)
        events.addEventListener('synced', () => { w.synced++ })
        events.addEventListener('put', (e: { data: string }) => { w.puts.push((JSON.parse(e.data) as { key: string }).key) })
      }
    }, STREAMS)
    await page.waitForFunction((n) => (globalThis as any).synced === n, STREAMS, { timeout: 15_000 })
    const kv = await nc.jetstream().views.kv(BUCKETS.applied)
    for (let i = 0; i < STREAMS; i++) await kv.put(`h2node${i}.gitea`, '{}')
    await page.waitForFunction((n) => (globalThis as any).puts.length === n, STREAMS, { timeout: 15_000 })
    expect((await page.evaluate(() => (globalThis as any).puts as string[])).sort()).toEqual(Array.from({ length: STREAMS }, (_, i) => `h2node${i}.gitea`).sort())
  }, 60_000)

  test('follows a node\'s page over HTTP/2: its overview row kept current by wait with If-None-Match, its needs by an event stream', async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true })
    fx.defer(async () => await context.close())
    const page = await context.newPage()
    await page.goto(`${running.url}/healthz`)
    const first = await page.evaluate(async () => {
      const w = globalThis as any
      const got = await w.fetch('/v1/nodes/ace')
      w.needsPuts = []
      w.needsSynced = false
      const events = new w.EventSource('/v1/needs/events?node=ace')
      events.addEventListener('synced', () => { w.needsSynced = true })
      events.addEventListener('put', (e: { data: string }) => { w.needsPuts.push((JSON.parse(e.data) as { key: string }).key) })
      return { status: got.status as number, etag: got.headers.get('etag') as string, row: await got.json() as { needs: number } }
    })
    expect(first.status).toBe(200)
    await page.waitForFunction(() => (globalThis as any).needsSynced === true, undefined, { timeout: 15_000 })
    // The page holds its row's request while the row is unchanged; a write on another node does not release it.
    await page.evaluate((etag) => {
      const w = globalThis as any
      w.held = w.fetch('/v1/nodes/ace?wait=20s', { headers: { 'If-None-Match': etag } })
        .then(async (r: any) => ({ status: r.status as number, protocol: w.performance.getEntriesByType('resource').at(-1)?.nextHopProtocol as string, row: await r.json() as { needs: number } }))
    }, first.etag)
    const kv = await nc.jetstream().views.kv(BUCKETS.needs)
    await kv.put('g14.gitea.port.elsewhere', '{}')
    await kv.put('ace.gitea.port.page', '{}')
    const held = await page.evaluate(async () => await (globalThis as any).held) as { status: number, protocol: string, row: { needs: number } }
    expect([held.status, held.protocol, held.row.needs]).toEqual([200, 'h2', first.row.needs + 1])
    await page.waitForFunction(() => ((globalThis as any).needsPuts as string[]).includes('ace.gitea.port.page'), undefined, { timeout: 15_000 })
    // The snapshot's puts, then the change: only ace's keys.
    const puts = await page.evaluate(() => (globalThis as any).needsPuts as string[])
    expect(puts.at(-1)).toBe('ace.gitea.port.page')
    for (const key of puts) expect(key).toMatch(/^ace\./)
  }, 60_000)
})
