// Before the suites: says in one line when the suite is started on a Node older than the service
// supports, rather than letting the suites fail one by one in odd ways (`npm test` runs on the Node
// 24 that `npm ci` puts in node_modules/.bin, the devDependency `node`); fetches prometheus as the
// nats-server setup fetches 2.10; and names, one line each, the programs missing here and what is
// skipped for want of them (in CI, which installs them all, a missing one fails the run); and serves
// the one Chromium the browser files share (serveChromium).

import { execFileSync } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import type { BrowserServer } from 'playwright-core'
import type { TestProject } from 'vitest/node'
import { CHROMIUM, skipLine, TOOLS, type ToolName } from './support/tools.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where test/support/browser.ts asks for the shared Chromium's endpoint (in nats-2.10 alone). */
    chromiumLauncher?: string
  }
}

const NODE_MAJOR = 22
const FETCH_PROMETHEUS = fileURLToPath(new URL('../scripts/fetch-prometheus.sh', import.meta.url))

/**
 * One Chromium for the run, a Playwright server each browser file connects to (a launch is ~3 s of
 * CPU before any page). vitest tells a global setup its project, not which files run, so it is
 * launched at the first file's asking, through a local endpoint that answers its wsEndpoint: a run
 * with no browser file (or without chromium) launches none. When it has died, the endpoint says so.
 */
async function serveChromium (project: TestProject): Promise<() => Promise<void>> {
  let launched: Promise<BrowserServer> | undefined
  let died: string | undefined
  const launch = async (): Promise<BrowserServer> => {
    // Loaded here, not by every run's setup.
    const { chromium } = await import('playwright-core')
    const server = await chromium.launchServer({
      executablePath: CHROMIUM,
      // Off this machine's closed network.
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
    })
    server.process().once('exit', (code, signal) => { died = `the shared Chromium (pid ${server.process().pid}) exited mid-run (${signal ?? `code ${code}`}); the browser files after that cannot run` })
    return server
  }
  const answer = async (): Promise<[number, string]> => {
    try {
      const server = await (launched ??= launch())
      return died === undefined ? [200, server.wsEndpoint()] : [500, died]
    } catch (err) {
      return [500, `the shared Chromium did not start: ${(err as Error).message}`]
    }
  }
  const endpoint = createServer((_req, res) => {
    void answer().then(([status, text]) => res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(text))
  })
  endpoint.listen(0, '127.0.0.1')
  await once(endpoint, 'listening')
  project.provide('chromiumLauncher', `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`)
  return async () => {
    endpoint.close()
    await (await launched?.catch(() => undefined))?.close()
  }
}

export default async function setup (project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (Number(process.versions.node.split('.')[0]) < NODE_MAJOR) {
    throw new Error(`the suite needs Node ${NODE_MAJOR} or later (Node 24 LTS in CI) and runs on ${process.version} (${process.execPath}); run \`npm ci\`, then \`npm test\`, whose node_modules/.bin/node is Node 24`)
  }
  // The suites that need these run in the nats-2.10 project alone: said once, not once a project.
  if (project.name !== 'nats-2.10') return undefined
  const ci = process.env['CI'] !== undefined
  const why: Partial<Record<ToolName, string>> = {}
  if (!TOOLS.prometheus.present() && !ci) {
    try {
      execFileSync('bash', [FETCH_PROMETHEUS], { stdio: ['ignore', 'ignore', 'pipe'] })
    } catch (err) {
      const said = String((err as { stderr?: Buffer }).stderr ?? '').trim().split('\n').at(-1)
      why.prometheus = `it failed${said === undefined || said === '' ? '' : `: ${said}`}`
    }
  }
  const missing = (Object.keys(TOOLS) as ToolName[]).filter((name) => !TOOLS[name].present())
  if (ci && missing.length > 0) throw new Error(`CI installs every program the suites need (.ci/run): ${missing.map((name) => TOOLS[name].missing).join('; ')}`)
  for (const name of missing) process.stdout.write(`${skipLine(name, why[name])}\n`)
  return await serveChromium(project)
}
