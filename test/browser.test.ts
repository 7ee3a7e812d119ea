// The Swagger page in a real browser (Debian's chromium through playwright-core): it loads from the
// service alone, and "Try it out" on /v1/needs gets the 200 answer from a seeded NATS.

import type { Browser } from 'playwright-core'
import { beforeAll, describe, expect, test } from 'vitest'
import type { Running } from '../src/service.js'
import { chromiumPresent, connectChromium, offline, tryNeedsOfAce } from './support/browser.js'
import { startSeeded, suiteFixture, type Seeded } from './support/service.js'

describe.skipIf(!chromiumPresent)('the Swagger page in Chromium', () => {
  const fx = suiteFixture()
  let seeded: Seeded
  let running: Running
  let browser: Browser

  beforeAll(async () => {
    seeded = await startSeeded(fx)
    running = seeded.running
    browser = await connectChromium(fx)
  }, 60_000)

  test('runs "Try it out" on /v1/needs and shows the 200 answer, fetching nothing from outside', async () => {
    const page = await browser.newPage()
    const outside = await offline(page, running.url)
    const failed: string[] = []
    page.on('requestfailed', (r) => failed.push(r.url()))
    try {
      const { operation, execute, status, body: shown } = await tryNeedsOfAce(page, running.url)
      await execute()
      await status.waitFor({ timeout: 20_000 })
      expect((await status.textContent())?.trim()).toBe('200')
      const body = await shown.textContent()
      expect(body).toContain('"bucket": "mesh-provisioner_needs"')
      expect(body).toContain('"key": "ace.gitea.secret.db-password"')
      const requestUrl = await operation.locator('.request-url pre').textContent()
      expect(requestUrl).toBe(`${running.url}/v1/needs?node=ace&limit=1000`)
      expect(outside).toEqual([])
      expect(failed).toEqual([])
    } finally {
      await page.close()
    }
  }, 90_000)
})
