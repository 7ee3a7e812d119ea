// Debian's Chromium for the tests a person's browser would do (through playwright-core): skipped
// locally when it is absent, required in CI. The flags keep it off this machine's closed network.

import { chromium, type Browser, type Locator, type Page } from 'playwright-core'
import type { Fixture } from './service.js'
import { CHROMIUM, has } from './tools.js'

/** Whether the browser tests run here; in CI its absence is an error, not a skip. */
export const chromiumPresent = has('chromium')
if (!chromiumPresent && process.env['CI'] !== undefined) throw new Error(`${CHROMIUM} is missing; CI installs Debian's chromium package (.ci/run)`)

/** A headless Chromium, closed with `fx`. */
export async function launchChromium (fx: Fixture): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
  })
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
