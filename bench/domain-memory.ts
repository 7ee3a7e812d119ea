// Bytes a Contents holds per needs entry, without a bus: 300k changes shaped like the bench's mesh fed
// to one Contents, the indexes built, then heap and RSS after V8's memory-reducing collection
// against the same process before. Quicker than the bench's memory row to iterate on; run with
// `node --expose-gc --import tsx bench/domain-memory.ts [entries]`.

import { Contents } from '../src/domain/store/contents.js'
import { ArrivedChange } from '../src/domain/follow/kv-feed.js'
import { MODULES, nodeName } from './mesh.js'

const KINDS = ['secret', 'config', 'port', 'dir', 'bound']
const gc = (globalThis as { gc?: (options: object) => void }).gc
if (gc === undefined) throw new Error('run with --expose-gc')

async function settle (): Promise<NodeJS.MemoryUsage> {
  for (let i = 0; i < 3; i++) {
    gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' })
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return process.memoryUsage()
}

const wanted = Number(process.argv[2] ?? 300_000)
const utf8 = new TextEncoder()
const before = await settle()
const contents = Contents.sized('needs', '2026-11-30T00:00:00Z', wanted)
let revision = 0
let applyMs = 0
const created = new Date()
for (let n = 0; revision < wanted; n++) {
  const node = nodeName(n)
  for (const module of MODULES) {
    for (const kind of KINDS) {
      for (let i = 0; i < 10; i++) {
        // A change as the feed gives it (kv-feed.ts): its key the bytes of its subject's tail.
        const subject = utf8.encode(`$KV.mesh-provisioner_needs.${node}.${module}.${kind}.${kind}-${i}`)
        const value = utf8.encode(JSON.stringify({ file: `/run/secrets/${module}/${kind}-${i}`, owner: 65534, group: 65534, mode: '0400', rotate: '90d' }))
        const t = performance.now()
        contents.apply(new ArrivedChange(subject.subarray(27), ++revision, 'PUT', value, created, 0))
        applyMs += performance.now() - t
      }
    }
  }
}
const t = performance.now()
if (process.argv[3] !== 'noindex') contents.buildIndexes()
const buildMs = performance.now() - t
const after = await settle()
const per = (k: 'heapUsed' | 'heapTotal' | 'rss' | 'external' | 'arrayBuffers'): string => ((after[k] - before[k]) / revision).toFixed(0)
console.log(`${revision} entries: heap ${per('heapUsed')} B (committed ${per('heapTotal')} B), external ${per('external')} B, RSS ${per('rss')} B an entry; apply ${applyMs.toFixed(0)} ms, index build ${buildMs.toFixed(0)} ms`)
