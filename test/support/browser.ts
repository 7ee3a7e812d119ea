// Debian's Chromium for the tests a person's browser would do (through playwright-core): skipped
// locally when it is absent, required in CI. One Chromium serves the whole run (test/global-setup.ts
// launches it, off this machine's closed network); each file connects to it and keeps to contexts
// and pages of its own.

import { chromium, type Browser, type Locator, type Page } from 'playwright-core'
import { request } from 'undici'
import { inject } from 'vitest'
import type { Fixture } from './service.js'
import { CHROMIUM, has } from './tools.js'

/** Whether the browser tests run here; in CI its absence is an error, not a skip. */
export const chromiumPresent = has('chromium')
if (!chromiumPresent && process.env['CI'] !== undefined) throw new Error(`${CHROMIUM} is missing; CI installs Debian's chromium package (.ci/run)`)

/**
 * The run's Chromium, connected to for `fx`: disposing it closes this file's contexts and leaves the
 * browser to the other files.
 */
export async function connectChromium (fx: Fixture): Promise<Browser> {
  const launcher = inject('chromiumLauncher')
  if (launcher === undefined) throw new Error('the browser tests run in the nats-2.10 project, whose global setup serves Chromium (vitest.config.ts)')
  const answer = await request(launcher)
  const said = await answer.body.text()
  if (answer.statusCode !== 200) throw new Error(said)
  const browser = await chromium.connect(said)
  fx.defer(async () => await browser.close())
  return browser
}

/** Lets `page` reach only `allowed` origins (and data: URLs); what else it asks for is aborted and listed. */
export async function offline (page: Page, ...allowed: string[]): Promise<string[]> {
  const outside: string[] = []
  await page.route('**/*', async (route) => {
    const url = route.request().url()
    if (url.startsWith('data:') || allowed.some((origin) => url.startsWith(origin))) return await route.continue()
    outside.push(url)
    return await route.abort()
  })
  return outside
}

/**
 * Opens the Swagger page the gateway at `url` serves and "Try it out" of GET /v1/needs with
 * node=ace filled in: the operation, its Execute button, and where its answer's status and body show.
 */
export async function tryNeedsOfAce (page: Page, url: string): Promise<{ operation: Locator, execute: () => Promise<void>, status: Locator, body: Locator }> {
  await page.goto(`${url}/docs`, { timeout: 20_000 })
  const operation = page.locator('#operations-provisioning-listNeeds')
  await operation.locator('.opblock-summary').click({ timeout: 20_000 })
  await operation.getByRole('button', { name: 'Try it out' }).click({ timeout: 10_000 })
  // node takes several values: Swagger UI shows a list, each item added by its button.
  const node = operation.locator('tr[data-param-name="node"]')
  await node.getByRole('button', { name: 'Add string item' }).click()
  await node.locator('input').fill('ace')
  return {
    operation,
    execute: async () => { await operation.getByRole('button', { name: 'Execute' }).click() },
    status: operation.locator('.live-responses-table .response .response-col_status').first(),
    body: operation.locator('.live-responses-table .response-col_description pre').first()
  }
}
