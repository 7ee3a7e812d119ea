// What users meet holding requests open (docs/following-changes.md): event streams on one filter
// and on a filter per node and module, the live rows of docs/glance.md, and requests held by
// `wait`. Each opens 1000 of them on the large mesh's service, measures what they hold (RSS) and
// how soon a write reaches them; every timed write counts (no untimed prelude).

import { Agent, request } from 'node:http'
import type { KV, NatsConnection } from 'nats'
import { BUCKETS, keyOf } from '../src/domain/wire/key-shapes.js'
import type { Child } from './child.js'
import { MODULES, REQUEST, nodeName } from './mesh.js'
import { log, percentile, rssOf, smallRun, streamCount } from './measure.js'
import { openStreams, StreamRefused, type OpenStreams } from './streams.js'
import type { Row } from './table.js'

/** The service the rows measure: its process (for its RSS) and its gateway. */
export interface Held { child: Child, url: string, nc: NatsConnection, keys: number }

/** The first `n` node-and-module pairs of the mesh, node by node. */
function pairs (n: number): Array<{ node: string, module: string }> {
  return Array.from({ length: n }, (_, i) => ({ node: nodeName(Math.floor(i / MODULES.length)), module: MODULES[i % MODULES.length] as string }))
}

const needsKv = async (nc: NatsConnection): Promise<KV> => await nc.jetstream().views.kv(BUCKETS.needs, { bindOnly: true })

/** A need of `node` and `module` (one of ten names, so that a row's writes replace keys as a client's do). */
const needKey = (node: string, module: string, i: number): string => keyOf('needs', { node, module, kind: 'config', name: `config-${i % 10}` })

/** Opens the streams of `urls`, or says why the gateway refused them (a route not served yet); logs how long they took to open, each through its snapshot. */
async function opened (urls: string[]): Promise<OpenStreams | string> {
  const started = performance.now()
  try {
    const open = await openStreams(urls)
    log(`${urls.length} streams of ${new URL(urls[0] as string).pathname} open and synced in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    return open
  } catch (err) {
    if (!(err instanceof StreamRefused)) throw err
    return `GET ${new URL(urls[0] as string).pathname} answers ${err.status}: the gateway does not serve it`
  }
}

const p99 = (times: number[]): string => `p50 ${percentile(times, 0.5).toFixed(1)}, p99 ${percentile(times, 0.99).toFixed(1)}, max ${percentile(times, 1).toFixed(1)} ms`

/** 1000 streams on one node's needs, a put of that node at a time: put → event at every stream, and what the idle streams hold. */
export async function oneFilterRows (held: Held): Promise<Row[]> {
  const writes = smallRun ? 10 : 100
  const eventWhat = `event streams: ${streamCount} open on one node's filter, put → event p99 over ${writes} writes × ${streamCount} streams (ms), ${held.keys} keys`
  const memoryWhat = `memory per open idle event stream (KB): RSS with ${streamCount} streams open − without, per stream`
  const before = await rssOf(held.child)
  const open = await opened(Array.from({ length: streamCount }, () => `${held.url}/v1/needs/events?node=${REQUEST.node}`))
  if (typeof open === 'string') return [{ what: eventWhat, missing: open, unit: 'ms', goal: { absolute: 50 } }, { what: memoryWhat, missing: open, unit: 'KB', goal: { absolute: 30 } }]
  try {
    const perStream = (await rssOf(held.child) - before) / streamCount / 1024
    const kv = await needsKv(held.nc)
    const times: number[] = []
    for (let i = 0; i < writes; i++) {
      const key = needKey(REQUEST.node, MODULES[2] as string, i)
      const arrivals = open.streams.map((s) => s.putOf(key, 0))
      const started = performance.now()
      await kv.put(key, JSON.stringify({ keys: ['site'], file: `/etc/${i}.json` }))
      times.push(...(await Promise.all(arrivals)).map((at) => at - started))
    }
    log(`event streams on one filter: put → event ${p99(times)}`)
    return [
      { what: eventWhat, service: percentile(times, 0.99), unit: 'ms', goal: { absolute: 50 } },
      { what: memoryWhat, service: perStream, unit: 'KB', goal: { absolute: 30 } }
    ]
  } finally {
    open.close()
  }
}

/** 1000 streams, one a node and module, a put on each in turn: put → event at its stream. */
export async function distinctFiltersRow (held: Held): Promise<Row> {
  const asked = pairs(streamCount)
  const what = `event streams on distinct filters: ${streamCount} open, one a node and module, a put on each in turn, put → event p99 over ${streamCount} writes (ms), ${held.keys} keys`
  const open = await opened(asked.map(({ node, module }) => `${held.url}/v1/needs/events?node=${node}&module=${module}`))
  if (typeof open === 'string') return { what, missing: open, unit: 'ms', goal: { absolute: 50 } }
  try {
    const kv = await needsKv(held.nc)
    const times: number[] = []
    for (const [i, { node, module }] of asked.entries()) {
      const key = needKey(node, module, i)
      const arrival = open.streams[i]?.putOf(key, 0) as Promise<number>
      const started = performance.now()
      await kv.put(key, JSON.stringify({ keys: ['site'], file: `/etc/${i}.json` }))
      times.push(await arrival - started)
    }
    log(`event streams on distinct filters: put → event ${p99(times)}`)
    return { what, service: percentile(times, 0.99), unit: 'ms', goal: { absolute: 50 } }
  } finally {
    open.close()
  }
}

/** 1000 live-row streams, one a node's modules, a need written on each node in turn: write → the module's row at that node's streams. */
export async function liveRowsRow (held: Held): Promise<Row> {
  const nodes = Math.max(1, Math.min(Math.round(held.keys / (MODULES.length * 50)), streamCount))
  const writes = smallRun ? 10 : 100
  const what = `live rows: ${streamCount} open GET /v1/modules/events, each on one of ${nodes} nodes, a need written on each node in turn, write → row event p99 over ${writes} writes (ms), ${held.keys} keys`
  const open = await opened(Array.from({ length: streamCount }, (_, i) => `${held.url}/v1/modules/events?node=${nodeName(i % nodes)}`))
  if (typeof open === 'string') return { what, missing: open, unit: 'ms', goal: { absolute: 50 } }
  try {
    const kv = await needsKv(held.nc)
    const times: number[] = []
    for (let i = 0; i < writes; i++) {
      const node = nodeName(i % nodes)
      const module = MODULES[3] as string
      // A need written after the module's applied entry: the row's needsUpdated (and state) move.
      const arrivals = open.streams.filter((_, s) => s % nodes === i % nodes).map((s) => s.putWhere((row) => row['node'] === node && row['module'] === module))
      const started = performance.now()
      await kv.put(needKey(node, module, i), JSON.stringify({ keys: ['site'], file: `/etc/${i}.json` }))
      times.push(...(await Promise.all(arrivals)).map((at) => at - started))
    }
    log(`live rows: write → row event ${p99(times)}`)
    return { what, service: percentile(times, 0.99), unit: 'ms', goal: { absolute: 50 } }
  } finally {
    open.close()
  }
}

interface Holding {
  /** Once the request is sent whole. */
  sent: Promise<void>
  /** Its status and the cursor it answered. */
  answered: Promise<{ status: number, cursor: string | undefined }>
}

/** One request held by `wait`. */
function hold (agent: Agent, url: string): Holding {
  let sent!: () => void
  const out: Holding = { sent: new Promise((resolve) => { sent = resolve }), answered: Promise.resolve({ status: 0, cursor: undefined }) }
  out.answered = new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { body += chunk })
      res.once('end', () => resolve({ status: res.statusCode ?? 0, cursor: res.statusCode === 200 ? (JSON.parse(body) as { cursor?: string }).cursor : undefined }))
    })
    req.once('error', reject)
    req.once('finish', sent)
    req.end()
  })
  return out
}

/** The cursor of the list of `node` and `module` now. */
async function cursorOf (url: string, node: string, module: string): Promise<string> {
  const r = await fetch(`${url}/v1/needs?node=${node}&module=${module}&limit=1`)
  return (await r.json() as { cursor: string }).cursor
}

/**
 * 1000 requests held by `wait`, one a node and module: what each holds (RSS), then a write on each
 * of some in turn, timed to its answer, and held again from the cursor it answered.
 */
export async function heldWaitsRows (held: Held): Promise<Row[]> {
  const n = streamCount
  const writes = smallRun ? 10 : 100
  const memoryWhat = `held waits, memory: KB of RSS per request held by wait, ${n} held, one a node and module`
  const wakeWhat = `held waits, wake: write → answer p99 with ${n} held, over ${writes} writes (ms), ${held.keys} keys`
  const asked = pairs(n)
  const listUrl = ({ node, module }: { node: string, module: string }, cursor: string): string => `${held.url}/v1/needs?node=${node}&module=${module}&since=${encodeURIComponent(cursor)}&wait=60s`
  const cursors = await Promise.all(asked.map(async (p) => await cursorOf(held.url, p.node, p.module)))
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity })
  const before = await rssOf(held.child)
  const holding = asked.map((p, i) => hold(agent, listUrl(p, cursors[i] as string)))
  try {
    // Every request sent, then two requests behind them on the same server: the holds are in
    // before the RSS is read (the service takes requests in the order they arrive).
    await Promise.all(holding.map((h) => h.sent))
    for (let i = 0; i < 2; i++) await (await fetch(`${held.url}/healthz`)).arrayBuffer()
    const perHeld = (await rssOf(held.child) - before) / n / 1024
    const kv = await needsKv(held.nc)
    const times: number[] = []
    // Each write's ack from NATS: the log tells a slow answer from a slow put.
    const acks: number[] = []
    for (let i = 0; i < writes; i++) {
      const j = (i * 37) % n
      const { node, module } = asked[j] as { node: string, module: string }
      const started = performance.now()
      await kv.put(needKey(node, module, i), JSON.stringify({ wanted: i }))
      acks.push(performance.now() - started)
      const answered = await holding[j]?.answered
      times.push(performance.now() - started)
      if (answered?.status !== 200 || answered.cursor === undefined) throw new Error(`a held wait answered ${answered?.status} after a write it shows`)
      holding[j] = hold(agent, listUrl({ node, module }, answered.cursor))
    }
    const slowest = times.indexOf(Math.max(...times))
    log(`held waits: ${perHeld.toFixed(1)} KB each; write → answer ${p99(times)}; the slowest, write ${slowest + 1} of ${writes}, acked in ${(acks[slowest] as number).toFixed(1)} ms`)
    return [
      { what: memoryWhat, service: perHeld, unit: 'KB', goal: { absolute: 16 } },
      { what: wakeWhat, service: percentile(times, 0.99), unit: 'ms', goal: { absolute: 50 } }
    ]
  } finally {
    agent.destroy()
    await Promise.allSettled(holding.map((h) => h.answered))
  }
}
