// A quick measure of the mesh at a glance (SPEC §10) at the bench's size: the cost of each answer
// built cold (no cached answer), against a scan of every needs entry, and the heap the view holds.
// Run: node --expose-gc --import tsx bench/glance.ts [needs keys, default 300000]

import { pino } from 'pino'
import { loadConfig } from '../src/config.js'
import { startService } from '../src/service.js'
import { createProvisioning } from '../src/domain/answers/provisioning.js'
import { readRequest, type OverviewQuery, type Query } from '../src/domain/wire/request.js'
import { isOverview } from '../src/domain/wire/request.js'
import { NatsServer } from '../testkit/nats-server.js'
import { nodeName, nodesFor, seedMesh } from './mesh.js'

const keys = Number(process.argv[2] ?? 300_000)
const server = await NatsServer.start()
const nc = await server.connect()
const seeded = await seedMesh(nc, nodesFor(keys))
console.log(`seeded ${seeded.needs} needs keys (${seeded.writes} writes) in ${seeded.seconds.toFixed(1)} s`)
const started = performance.now()
const running = await startService({ config: loadConfig({ ...server.serviceEnv(), HTTP_PORT: '0', LOG_LEVEL: 'silent' }), log: pino({ level: 'silent' }), version: '0.0.0-bench' })
console.log(`serving after ${((performance.now() - started) / 1000).toFixed(2)} s`)
const gc = (globalThis as { gc?: () => void }).gc
gc?.()
console.log(`heap used ${(process.memoryUsage().heapUsed / 1e6).toFixed(1)} MB, rss ${(process.memoryUsage().rss / 1e6).toFixed(1)} MB`)

/** The median ms of asking `question` with every cache cold (a fresh domain each time). */
function cold (question: Record<string, unknown>, runs = 15): { ms: number, bytes: number } {
  const times: number[] = []
  let bytes = 0
  const query = readRequest(question)
  for (let i = 0; i < runs; i++) {
    const p = createProvisioning(running.views)
    const t = performance.now()
    const answer = isOverview(query) ? p.overviews.ask(query as OverviewQuery, { maxBytes: 1 << 20 }) : p.ask(query as Query, { maxBytes: 1 << 20, defaultLimit: 1000 })
    times.push(performance.now() - t)
    bytes = answer.json.length
  }
  return { ms: times.sort((a, b) => a - b)[Math.floor(runs / 2)] as number, bytes }
}

const node = nodeName(7)
const questions: Array<Record<string, unknown>> = [
  { what: 'nodes' },
  { what: 'nodes', node },
  { what: 'modules', limit: 1000 },
  { what: 'modules', state: 'pending' },
  { what: 'modules', node },
  { what: 'needs', by: 'node' },
  { what: 'needs', by: 'kind' },
  { what: 'needs', by: 'module', node },
  { what: 'collect', by: 'collection' },
  { what: 'needs', node, module: 'gitea' }
]
for (const q of questions) {
  const { ms, bytes } = cold(q)
  console.log(`${JSON.stringify(q).padEnd(52)} ${ms.toFixed(2).padStart(8)} ms  ${String(bytes).padStart(8)} B`)
}
const needs = running.views.byWhat.needs.read()
const t = performance.now()
const perNode = new Map<string, number>()
for (let i = 0; i < needs.entries.keys.size; i++) {
  if (!needs.entries.holds(i)) continue
  const key = needs.entries.keys.keyAt(i)
  const n = key.slice(0, key.indexOf('.'))
  perNode.set(n, (perNode.get(n) ?? 0) + 1)
}
console.log(`a scan of every needs entry, counted by node: ${(performance.now() - t).toFixed(2)} ms (${perNode.size} nodes)`)
await running.stop()
await nc.close()
await server.dispose()
