// The Swagger page in a real browser against a gateway that asks for tokens (docs/access.md): the page
// and its assets load openly under the security headers' content security policy, "Try it out"
// answers 401 until the token is given through the Authorize button, and 200 after.

import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { beforeAll, describe, expect, test } from 'vitest'
import { newToken } from '../src/settings/tokens-file.js'
import type { Running } from '../src/service.js'
import { seedSampleMesh } from '../testkit/sample-mesh.js'
import { chromiumPresent, connectChromium, offline, tryNeedsOfAce } from './support/browser.js'
import { suiteFixture, untilReady } from './support/service.js'

describe.skipIf(!chromiumPresent)('the Swagger page in Chromium, with tokens', () => {
  const ace = newToken('ace', ['ace'], false)
  const fx = suiteFixture()
  let running: Running
  let browser: Browser

  beforeAll(async () => {
    const server = await fx.server()
    await seedSampleMesh(await fx.admin(server))
    const file = join(await mkdtemp(join(tmpdir(), 'mesh-provisioner-browser-')), 'tokens.json')
    await writeFile(file, JSON.stringify({ tokens: [ace.entry] }))
    running = await fx.service(server, { HTTP_TOKENS_FILE: file })
    await untilReady(running)
    browser = await connectChromium(fx)
  }, 60_000)

  test('answers 401 before Authorize and 200 after, with no content security policy violation', async () => {
    const page = await browser.newPage()
    const outside = await offline(page, running.url)
    const violations: string[] = []
    page.on('console', (m) => { if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text()) })
    try {
      const { execute, status, body } = await tryNeedsOfAce(page, running.url)

      await execute()
      await expect.poll(async () => (await status.textContent())?.trim(), { timeout: 20_000 }).toBe('401')
      expect(await body.textContent()).toContain('"code": "UNAUTHORIZED"')

      await page.locator('.auth-wrapper .btn.authorize').click()
      const dialog = page.locator('.dialog-ux .modal-ux')
      await dialog.locator('input').fill(ace.token)
      await dialog.getByRole('button', { name: 'Apply credentials' }).click()
      await dialog.getByRole('button', { name: 'Close' }).click()

      await execute()
      await expect.poll(async () => (await status.textContent())?.trim(), { timeout: 20_000 }).toBe('200')
      expect(await body.textContent()).toContain('"key": "ace.gitea.secret.db-password"')
      expect(outside).toEqual([])
      expect(violations).toEqual([])
    } finally {
      await page.close()
    }
  }, 90_000)
})
