// The page at GET / in a real browser (Debian's chromium through playwright-core), on a gateway that
// asks for tokens: it asks for one and shows only what it reads, shows the seeded mesh as the JSON
// routes answer it, takes a write without a reload, shows a node's modules when the person picks it
// with the keyboard, and says when NATS is gone and when the stream from the service is lost; all
// under the page's own content security policy, with nothing fetched from outside.

import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { NatsConnection } from 'nats'
import type { Browser, Page } from 'playwright-core'
import { beforeAll, describe, expect, test } from 'vitest'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import { newToken } from '../src/settings/tokens-file.js'
import type { Running } from '../src/service.js'
import { seedSampleMesh, NODES } from '../testkit/sample-mesh.js'
import type { NatsServer } from '../testkit/nats-server.js'
import { chromiumPresent, connectChromium, offline } from './support/browser.js'
import { request } from './support/http.js'
import { suiteFixture, untilReady } from './support/service.js'

/** The cells of a table's body, row by row, as a person reads them. */
async function cells (page: Page, table: string): Promise<string[][]> {
  return await page.locator(`#${table} tbody tr`).evaluateAll((rows) => rows.map((row) => [...row.children].map((cell) => (cell.textContent ?? '').trim())))
}

/** The status line's text. */
async function status (page: Page): Promise<string> {
  return (await page.locator('#status').textContent()) ?? ''
}

describe.skipIf(!chromiumPresent)('the page at GET / in Chromium', () => {
  const consoleToken = newToken('console', '*', false)
  const ace = newToken('ace', ['ace'], false)
  const fx = suiteFixture()
  let server: NatsServer
  let nc: NatsConnection
  let running: Running
  let browser: Browser
  let page: Page
  let outside: string[]
  const violations: string[] = []

  /** An answer of the gateway as the console token reads it. */
  const read = async (path: string): Promise<any> => await (await request(`${running.url}${path}`, { headers: { authorization: `Bearer ${consoleToken.token}` } })).body.json()
  const needs = async () => await nc.jetstream().views.kv(BUCKETS.needs)

  beforeAll(async () => {
    server = await fx.server()
    nc = await fx.admin(server)
    await seedSampleMesh(nc)
    // Beside the seeded modules, all applied: one written to after its applied entry (pending), one
    // with needs alone (unapplied), and a need of a kind no domain answers.
    const kv = await needs()
    await kv.put('g14.gitea.secret.rotated', '{}')
    await kv.put('ace.mail.secret.dkim', '{}')
    await kv.put('ace.mail.typo.forge-account', '{}')
    const file = join(await mkdtemp(join(tmpdir(), 'mesh-provisioner-page-')), 'tokens.json')
    await writeFile(file, JSON.stringify({ tokens: [consoleToken.entry, ace.entry] }))
    running = await fx.service(server, { HTTP_TOKENS_FILE: file })
    await untilReady(running)
    browser = await connectChromium(fx)
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } })
    outside = await offline(page, running.url)
    page.on('console', (m) => { if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text()) })
    page.on('pageerror', (err) => { violations.push(err.message) })
  }, 60_000)

  test('is served open, under a policy of its own origin alone', async () => {
    for (const path of ['/', '/page/main.js', '/page/page.css']) {
      const answer = await request(`${running.url}${path}`)
      expect(answer.statusCode, path).toBe(200)
      expect(answer.headers['content-security-policy'], path).toMatch(/script-src 'self';.*style-src 'self';.*connect-src 'self'/)
      expect(answer.headers['content-security-policy'], path).not.toMatch(/unsafe-inline/)
      await answer.body.dump()
    }
    // Only the page's files: not a test or a declaration beside them.
    expect((await request(`${running.url}/page/age.test.ts`)).statusCode).toBe(404)
  })

  test('asks for a token, keeps it for the tab alone, and shows only what it reads', async () => {
    await page.goto(running.url, { timeout: 20_000 })
    const input = page.getByLabel('Bearer token')
    await expect.poll(async () => await input.isVisible(), { timeout: 10_000 }).toBe(true)
    expect(await page.locator('#mesh').isVisible()).toBe(false)

    await input.fill('not-a-token')
    await page.keyboard.press('Enter')
    await expect.poll(async () => await page.locator('#token-error').textContent(), { timeout: 10_000 }).toMatch(/^Not taken: the bearer token is not one the gateway knows/)

    await input.fill(ace.token)
    await page.getByRole('button', { name: 'Read with this token' }).click()
    await expect.poll(async () => (await cells(page, 'nodes')).map((row) => row[0]), { timeout: 10_000 }).toEqual(['ace'])
    expect(await page.locator('#reader').textContent()).toBe('Reading as ace: node ace')
    // The tables fill from streams of their own: the waiting one may come a moment after the nodes.
    await expect.poll(async () => (await cells(page, 'waiting')).map((row) => row[1]), { timeout: 10_000 }).toEqual(['ace / mail'])

    // Kept for the tab: a reload reads on with it; never in the page's URL, nor in a cookie.
    await page.reload()
    await expect.poll(async () => (await cells(page, 'nodes')).map((row) => row[0]), { timeout: 10_000 }).toEqual(['ace'])
    expect(page.url()).not.toContain(ace.token)
    expect(await page.context().cookies()).toEqual([])
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([ace.token])

    // Forgotten, it is asked for again; the console's token reads every node.
    await page.getByRole('button', { name: 'Forget the token' }).click()
    await input.fill(consoleToken.token)
    await page.keyboard.press('Enter')
    await expect.poll(async () => (await cells(page, 'nodes')).map((row) => row[0]), { timeout: 10_000 }).toEqual(NODES)
  }, 60_000)

  test('shows the seeded mesh as the JSON routes answer it', async () => {
    const nodes = (await read('/v1/nodes')).nodes as any[]
    const shown = (row: any) => [row.node, String(row.modules.applied), String(row.modules.pending), String(row.modules.unapplied), String(row.modules.orphaned), String(row.waiting), String(row.unanswered), String(row.outOfShape)]
    const columns = (row: string[]) => [row[0], row[2], row[3], row[4], row[5], row[6], row[8], row[9]]
    await expect.poll(async () => (await cells(page, 'nodes')).map(columns), { timeout: 10_000 }).toEqual(nodes.map(shown))
    // What a person should see: g14 and ace each have a module that waits, ace a need nobody answers.
    expect(nodes.find((n) => n.node === 'g14')).toMatchObject({ modules: { pending: 1 }, waiting: 1 })
    expect(nodes.find((n) => n.node === 'ace')).toMatchObject({ modules: { unapplied: 1 }, waiting: 2, unanswered: 1 })
    // Ages, not times: a need written seconds ago.
    expect((await cells(page, 'nodes')).find((row) => row[0] === 'ace')?.[7]).toMatch(/^\d+ (s|min)$/)

    const waiting = (await read('/v1/modules?state=pending&state=unapplied')).modules as any[]
    const oldestFirst = waiting.sort((a, b) => a.waitingSince < b.waitingSince ? -1 : 1).map((row) => [`${row.node} / ${row.module}`, row.state, String(row.waiting), String(row.unanswered)])
    await expect.poll(async () => (await cells(page, 'waiting')).map((row) => row.slice(1)), { timeout: 10_000 }).toEqual(oldestFirst)
    expect(await page.locator('#summary').textContent()).toContain('4 nodes')
    expect(await status(page)).toMatch(/^Live/)
  })

  test('shows a write as it arrives, without a reload', async () => {
    await page.evaluate(() => { (globalThis as any).sameDocument = true })
    await (await needs()).put('shanks.gitea.secret.fresh', '{}')
    await expect.poll(async () => (await cells(page, 'waiting')).map((row) => row[1]), { timeout: 10_000 }).toContain('shanks / gitea')
    await expect.poll(async () => (await cells(page, 'nodes')).find((row) => row[0] === 'shanks')?.slice(3, 4), { timeout: 10_000 }).toEqual(['1'])
    // Applied, it leaves what waits.
    await (await nc.jetstream().views.kv(BUCKETS.applied)).put('shanks.gitea', '{"plan":"gitea@4.1"}')
    await expect.poll(async () => (await cells(page, 'waiting')).map((row) => row[1]), { timeout: 10_000 }).not.toContain('shanks / gitea')
    await expect.poll(async () => (await cells(page, 'nodes')).find((row) => row[0] === 'shanks')?.slice(3, 4), { timeout: 10_000 }).toEqual(['0'])
    expect(await page.evaluate(() => (globalThis as any).sameDocument)).toBe(true)
  })

  test('shows a node\'s modules when the person picks it with the keyboard, and closes them', async () => {
    await page.locator('#nodes-heading').focus()
    // Tab through the real links of the table to g14's.
    for (let i = 0; i < 20 && await page.evaluate(() => (globalThis as any).document.activeElement?.textContent) !== 'g14'; i++) await page.keyboard.press('Tab')
    const link = page.locator('#nodes').getByRole('link', { name: 'g14', exact: true })
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).toBe('g14')
    // A visible focus: the outline the page draws around what has it.
    expect(await page.evaluate(() => {
      const style = (globalThis as any).getComputedStyle((globalThis as any).document.activeElement)
      return style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2
    })).toBe(true)
    await page.keyboard.press('Enter')

    const modules = (await read('/v1/modules?node=g14')).modules as any[]
    await expect.poll(async () => (await cells(page, 'picked-modules')).map((row) => row.slice(0, 4)), { timeout: 10_000 })
      .toEqual(modules.map((row) => [row.module, row.state, String(row.needs), String(row.waiting)]))
    expect(await page.locator('#picked-heading').textContent()).toBe('Modules on g14')
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.id)).toBe('picked-heading')
    expect(await link.getAttribute('aria-current')).toBe('true')

    // The picked node's rows are live too.
    await (await needs()).put('g14.grafana.secret.fresh', '{}')
    await expect.poll(async () => (await cells(page, 'picked-modules')).find((row) => row[0] === 'grafana')?.[1], { timeout: 10_000 }).toBe('pending')

    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).toBe('Close')
    await page.keyboard.press('Enter')
    await expect.poll(async () => await page.locator('#picked').isVisible(), { timeout: 10_000 }).toBe(false)
  })

  test('says when NATS is gone, and when it is back', async () => {
    await server.kill()
    await expect.poll(async () => await status(page), { timeout: 20_000 }).toMatch(/^The service answers stale: .*cut off from NATS/)
    await server.restart()
    await expect.poll(async () => await status(page), { timeout: 30_000 }).toMatch(/^Live/)
    // And follows the writes made since.
    await (await needs()).put('novox.mail.secret.after', '{}')
    await expect.poll(async () => (await cells(page, 'waiting')).map((row) => row[1]), { timeout: 20_000 }).toContain('novox / mail')
  }, 60_000)

  test('says when the stream from the service is lost, with nothing fetched from outside and no policy refused', async () => {
    expect(outside).toEqual([])
    expect(violations).toEqual([])
    await running.stop()
    await expect.poll(async () => await status(page), { timeout: 20_000 }).toMatch(/^Lost the live stream from the service/)
  }, 30_000)
})
