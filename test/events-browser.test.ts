// A console in a real browser (Debian's chromium through playwright-core): a page served from
// another origin, listed in CORS_ORIGINS, follows a node's needs with EventSource and a token in
// access_token, as the README shows; it receives the snapshot, synced and a live change.

import { mkdtemp, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import { newToken } from '../src/settings/tokens-file.js'
import type { Running } from '../src/service.js'
import { seedSampleMesh } from '../testkit/sample-mesh.js'
import type { NatsConnection } from 'nats'
import { chromiumPresent, connectChromium } from './support/browser.js'
import { request } from './support/http.js'
import { suiteFixture, untilReady } from './support/service.js'

/** The console's page: what the README's snippet does, recording what arrives. */
function page (service: string, token: string): string {
  return `<!doctype html><meta charset="utf-8"><title>console</title><script>
window.received = []
window.errors = 0
const events = new EventSource(${JSON.stringify(service)} + '/v1/needs/events?node=ace&access_token=' + encodeURIComponent(${JSON.stringify(token)}))
for (const type of ['put', 'outOfShape', 'synced', 'delete', 'stale', 'live', 'reset']) {
  events.addEventListener(type, (e) => window.received.push({ type, id: e.lastEventId, data: JSON.parse(e.data) }))
}
events.onerror = () => { window.errors++ }
</script>`
}

describe.skipIf(!chromiumPresent)('a console page on another origin follows the needs with EventSource', () => {
  const fx = suiteFixture()
  let nc: NatsConnection
  let running: Running
  let browser: Browser
  let site: Server
  let origin: string
  const token = newToken('console', '*', false)

  beforeAll(async () => {
    site = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(running.url, token.token)) })
    site.listen(0, '127.0.0.1')
    await once(site, 'listening')
    origin = `http://127.0.0.1:${(site.address() as { port: number }).port}`
    const server = await fx.server()
    nc = await fx.admin(server)
    await seedSampleMesh(nc)
    const dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-browser-'))
    await writeFile(join(dir, 'tokens.json'), JSON.stringify({ tokens: [token.entry] }))
    running = await fx.service(server, { CORS_ORIGINS: origin, HTTP_TOKENS_FILE: join(dir, 'tokens.json') })
    await untilReady(running)
    browser = await connectChromium(fx)
  }, 60_000)

  afterAll(() => {
    site?.close()
  })

  test('receives the snapshot, synced, then a live change', async () => {
    const tab = await browser.newPage()
    try {
      await tab.goto(origin, { timeout: 20_000 })
      await tab.waitForFunction(() => (globalThis as any).received.some((e: { type: string }) => e.type === 'synced'), undefined, { timeout: 20_000 })
      const list = await (await request(`${running.url}/v1/needs?node=ace&limit=10000`, { headers: { authorization: `Bearer ${token.token}` } })).body.json() as { entries: unknown[], total: number }
      const got = await tab.evaluate(() => (globalThis as any).received as Array<{ type: string, id: string, data: any }>)
      const synced = got.findIndex((e) => e.type === 'synced')
      expect(got.slice(0, synced).filter((e) => e.type === 'put').map((e) => e.data)).toEqual(list.entries)
      expect(got[synced]?.data).toMatchObject({ total: list.total, stale: false })
      expect(got[synced]?.id).toBe(got[synced]?.data.cursor)

      const kv = await nc.jetstream().views.kv(BUCKETS.needs)
      const revision = await kv.put('ace.console.config.live', '{"seen":true}')
      await tab.waitForFunction((r) => (globalThis as any).received.some((e: { type: string, data: { revision: number } }) => e.type === 'put' && e.data.revision === r), revision, { timeout: 10_000 })
      const live = (await tab.evaluate(() => (globalThis as any).received as Array<{ type: string, id: string, data: any }>)).slice(synced + 1)
      expect(live.map((e) => [e.type, e.data.key])).toEqual([['put', 'ace.console.config.live']])
      expect(live[0]?.id).toMatch(new RegExp(`^${revision}-\\d+$`))
      expect(await tab.evaluate(() => (globalThis as any).errors as number)).toBe(0)
    } finally {
      await tab.close()
    }
  }, 60_000)
})
