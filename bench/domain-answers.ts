// The CPU of an uncached answer, without a bus: a Contents fed like bench/domain-memory.ts, then
// every node-and-module request of the mesh asked in turn of the domain's Provisioning, so that no
// answer is kept. Run with `node --import tsx bench/domain-answers.ts [entries]` (add --cpu-prof to
// profile).

import { Contents } from '../src/domain/store/contents.js'
import { createProvisioning } from '../src/domain/answers/provisioning.js'
import type { AnsweredViews } from '../src/domain/answers/port.js'
import { WHATS } from '../src/domain/wire/key-shapes.js'
import { MODULES, nodeName } from './mesh.js'

const KINDS = ['secret', 'config', 'port', 'dir', 'bound']
const wanted = Number(process.argv[2] ?? 300_000)
const utf8 = new TextEncoder()
const contents = new Contents('needs', '2026-11-30T00:00:00Z')
let revision = 0
const created = new Date()
let nodes = 0
for (let n = 0; revision < wanted; n++, nodes++) {
  for (const module of MODULES) {
    for (const kind of KINDS) {
      for (let i = 0; i < 10; i++) {
        const key = `${nodeName(n)}.${module}.${kind}.${kind}-${i}`
        const value = utf8.encode(JSON.stringify({ file: `/run/secrets/${module}/${kind}-${i}`, owner: 65534, group: 65534, mode: '0400', rotate: '90d' }))
        contents.apply({ key, revision: ++revision, operation: 'PUT', value, created })
      }
    }
  }
}
contents.buildIndexes()
const view = { stale: false, read: () => contents, listen: () => () => {}, status: () => ({ state: 'live' as const }) }
const views: AnsweredViews = { byWhat: Object.fromEntries(WHATS.map((w) => [w, view])) as unknown as AnsweredViews['byWhat'] }
const provisioning = createProvisioning(views)
const requests: Array<{ node: string, module: string }> = []
for (let n = 0; n < nodes; n++) for (const module of MODULES) requests.push({ node: nodeName(n), module })
let bytes = 0
const ask = (q: { node: string, module: string }): void => {
  bytes += provisioning.ask({ what: 'needs', filter: { node: [q.node], module: [q.module] } }, { maxBytes: 1024 * 1024 }).bytes.length
}
for (const q of requests) ask(q)
const t = performance.now()
const cpu = process.cpuUsage()
const passes = 5
for (let p = 0; p < passes; p++) for (const q of requests) ask(q)
const used = process.cpuUsage(cpu)
const n = passes * requests.length
console.log(`${revision} entries, ${requests.length} requests × ${passes}: ${((performance.now() - t) * 1000 / n).toFixed(1)} µs wall, ${((used.user + used.system) / n).toFixed(1)} µs CPU an answer (${(bytes / (n + requests.length)).toFixed(0)} B)`)
