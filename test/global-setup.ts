// Before the suites: says in one line when the suite is started on a Node older than the service
// supports, rather than letting the suites fail one by one in odd ways (`npm test` runs on the Node
// 24 that `npm ci` puts in node_modules/.bin, the devDependency `node`); fetches prometheus as the
// nats-server setup fetches 2.10; and names, one line each, the programs missing here and what is
// skipped for want of them (in CI, which installs them all, a missing one fails the run).

import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { TestProject } from 'vitest/node'
import { skipLine, TOOLS, type ToolName } from './support/tools.js'

const NODE_MAJOR = 22
const FETCH_PROMETHEUS = fileURLToPath(new URL('../scripts/fetch-prometheus.sh', import.meta.url))

export default function setup (project: TestProject): void {
  if (Number(process.versions.node.split('.')[0]) < NODE_MAJOR) {
    throw new Error(`the suite needs Node ${NODE_MAJOR} or later (Node 24 LTS in CI) and runs on ${process.version} (${process.execPath}); run \`npm ci\`, then \`npm test\`, whose node_modules/.bin/node is Node 24`)
  }
  // The suites that need these run in the nats-2.10 project alone: said once, not once a project.
  if (project.name !== 'nats-2.10') return
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
}
