// The mesh at a glance (docs/glance.md): what the overview routes cost per row they answer, at two
// sizes ten times apart, and what one change costs the next overview against a cached one.

import type { NatsConnection } from 'nats'
import { BUCKETS, keyOf } from '../src/domain/wire/key-shapes.js'
import { REQUEST } from './mesh.js'
import { SUBJECT, alternate, httpBody, log, median, p50, smallRun } from './measure.js'
import { revisionIn } from './revision.js'
import type { Row } from './table.js'

const utf8 = new TextEncoder()

/**
 * Requests asked so far: each asks a limit no request of the run asked before (a run asks 2400;
 * the limits stay above 5000, above every answer's rows), so that no answer is a cached one, in
 * any round. The same limits each round had the third round's answers kept: the service keeps a
 * request asked twice.
 */
let asked = 0

/**
 * The p50 of `path` asked with a limit that differs each time (no cached answer), and the rows one
 * answer holds. Only the request is timed: the bench's own read of a megabyte of rows (JSON.parse,
 * a constant a row on both sides) once drew the ratio toward 1.
 */
async function uncached (url: string, path: string, rowsOf: (body: Record<string, unknown[]>) => number): Promise<{ ms: number, rows: number }> {
  const n = smallRun ? 20 : 200
  let body = ''
  const ms = await p50(async () => {
    const r = await httpBody(`${url}${path}${path.includes('?') ? '&' : '?'}limit=${10_000 - (asked++ % 5000)}`)
    if (r.status !== 200) throw new Error(`GET ${path} answers ${r.status}: ${r.body.slice(0, 200)}`)
    body = r.body
  }, n)
  return { ms, rows: rowsOf(JSON.parse(body) as Record<string, unknown[]>) }
}

/** Time per row of /v1/nodes and /v1/modules?state=pending together, uncached (µs). */
async function perRow (url: string): Promise<number> {
  const nodes = await uncached(url, '/v1/nodes', (b) => b['nodes']?.length ?? 0)
  const pending = await uncached(url, '/v1/modules?state=pending', (b) => b['modules']?.length ?? 0)
  log(`overview at ${url}: /v1/nodes ${nodes.rows} rows in ${nodes.ms.toFixed(2)} ms, pending modules ${pending.rows} rows in ${pending.ms.toFixed(2)} ms`)
  return 1000 * (nodes.ms + pending.ms) / Math.max(1, nodes.rows + pending.rows)
}

/** The p50 of the next /v1/nodes once a need has changed (and the verb shows it), and of a cached one asked alike. */
async function afterChange (url: string, nc: NatsConnection): Promise<{ changed: number, cached: number }> {
  const kv = await nc.jetstream().views.kv(BUCKETS.needs, { bindOnly: true })
  const n = smallRun ? 20 : 200
  const times: number[] = []
  const cachedTimes: number[] = []
  const asked = utf8.encode(JSON.stringify(REQUEST))
  for (let i = 0; i < n; i++) {
    const revision = await kv.put(keyOf('needs', { node: REQUEST.node, module: REQUEST.module, kind: 'port', name: `port-${i % 10}` }), JSON.stringify({ wanted: 7000 + i }))
    for (;;) {
      const m = await nc.request(SUBJECT, asked, { timeout: 10_000 })
      if (revisionIn(m.data) >= revision) break
    }
    const t = performance.now()
    await httpBody(`${url}/v1/nodes`)
    times.push(performance.now() - t)
    // The cached answer asked the same way: after a round trip of the verb, not back to back (a
    // request after another one finds the process awake; after 20 ms idle one took 1.6 ms).
    await nc.request(SUBJECT, asked, { timeout: 10_000 })
    const c = performance.now()
    await httpBody(`${url}/v1/nodes`)
    cachedTimes.push(performance.now() - c)
  }
  return { changed: median(times), cached: median(cachedTimes) }
}

/** The changed answer's row (docs/glance.md): what one change costs the next /v1/nodes, against a cached one. */
export async function overviewAfterChangeRow (large: { url: string, keys: number, nc: NatsConnection }): Promise<Row> {
  const what = `overview after one need changes: the next /v1/nodes at ${large.keys} keys (ms); floor: a cached answer asked alike`
  const probe = await httpBody(`${large.url}/v1/nodes`)
  if (probe.status !== 200) return { what, missing: `GET /v1/nodes answers ${probe.status}`, unit: 'ms', goal: { lower: 3 } }
  const { changed, cached } = await afterChange(large.url, large.nc)
  return { what, service: changed, floor: cached, unit: 'ms', goal: { lower: 3 } }
}

/** Time per row of the overview at a mesh ten times larger, the two services asked in alternating rounds. */
export async function overviewAtScaleRow (huge: { url: string, keys: number }, large: { url: string, keys: number }): Promise<Row> {
  const [atHuge, atLarge] = await alternate(async () => await perRow(huge.url), async () => await perRow(large.url))
  return { what: `overview at ${huge.keys.toLocaleString('en-US')} keys: /v1/nodes and /v1/modules?state=pending, uncached, time per row (µs); floor: the same at ${large.keys.toLocaleString('en-US')} keys`, service: atHuge, floor: atLarge, unit: 'µs', goal: { lower: 1.5 } }
}
