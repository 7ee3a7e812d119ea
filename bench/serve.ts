// A process of its own for each thing measured, so that no figure pays for the bench's memory or
// event loop: `service` (the whole service), `floor` (bare fastify and bare micro replying fixed
// bytes, over HTTP/1.1 or HTTP/2 with TLS), `bare` (a fastify listening and a nats.js connection,
// nothing else: what any such process holds), `console` (a browser asking one URL during a sweep), `watch` (raw kv.watch load of the four buckets) and
// `consume` (a raw ordered consumer of each bucket read whole, then following it), `probe` (another
// node's client putting one key and asking for it, during a sweep). Talks to the
// bench over IPC.

import Fastify, { type FastifyInstance } from 'fastify'
import { connect, consumerOpts, type KV, type KvEntry, type QueuedIterator } from 'nats'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import { revisionIn } from './revision.js'

/** What a process holds (bytes): its RSS, and of it the V8 heap's used and committed bytes and the memory outside it. */
export interface Memory { rss: number, heapUsed: number, heapTotal: number, external: number }
export type ToChild =
  | { type: 'floor', body: string, headers: Record<string, string>, subject: string, tls?: { cert: string, key: string } }
  | { type: 'rss' }
  | { type: 'stop' }
  | { type: 'answer', subject: string }
  | { type: 'probe', key: string, node: string, subject: string }
  | { type: 'enough' }
  /** The floor: fetch and store the service's answer at each path of `origin`. */
  | { type: 'paths', origin: string, paths: string[] }
  /** A console asking `url` one request at a time until `enough`. */
  | { type: 'console', url: string }
export type FromChild =
  | { type: 'ready', coldMs: number, url: string }
  | { type: 'floor', url: string }
  | { type: 'watched', ms: number, entries: number, keyBytes: number, valueBytes: number }
  | ({ type: 'rss' } & Memory)
  | ({ type: 'bare' } & Memory)
  | { type: 'consumed', ms: number, entries: number, keyBytes: number, valueBytes: number }
  | { type: 'answering' }
  | { type: 'probing' }
  /** Each put → visible of the probe key, and each put → its ack, in ms. */
  | { type: 'probed', visible: number[], acked: number[] }
  | { type: 'paths', stored: number }
  /** Each answer's time, in ms. */
  | { type: 'asked', times: number[] }

/** Where and as whom to connect: the settings of docs/running.md, set by the bench for each child. */
const env = process.env
const natsOptions = { servers: env['NATS_URL'] as string, user: env['NATS_USER'] as string, pass: env['NATS_PASSWORD'] as string }

function send (msg: FromChild): void {
  process.send?.(msg)
}

/**
 * RSS once garbage is collected (run with --expose-gc), so that it counts what is kept. The
 * collection is V8's memory-reducing one (`last-resort`, what its memory reducer does to an idle
 * process): a plain full collection leaves freed pages pooled and the young generation at its
 * grown size, which measured the load's garbage as much as what is held (RESULTS.md, findings).
 */
async function memory (): Promise<Memory> {
  const gc = (globalThis as { gc?: (options: object) => void }).gc
  for (let i = 0; i < 3; i++) {
    gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' })
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const { rss, heapUsed, heapTotal, external } = process.memoryUsage()
  return { rss, heapUsed, heapTotal, external }
}

function onMessage (fn: (msg: ToChild) => void | Promise<void>): void {
  process.on('message', (msg: ToChild) => { void Promise.resolve(fn(msg)).catch((err) => { console.error(err); process.exit(1) }) })
  process.on('disconnect', () => process.exit(0))
}

async function service (): Promise<void> {
  // Imported here, not above: the other modes must not hold the service's modules in their RSS.
  const [{ pino }, { loadConfig }, { startService }] = await Promise.all([import('pino'), import('../src/config.js'), import('../src/service.js')])
  const config = loadConfig({
    NATS_URL: env['NATS_URL'],
    NATS_USER: env['NATS_USER'],
    NATS_PASSWORD: env['NATS_PASSWORD'],
    HTTP_PORT: '0',
    LOG_LEVEL: env['LOG_LEVEL'] ?? 'warn',
    HTTP_TLS_CERT: env['HTTP_TLS_CERT'],
    HTTP_TLS_KEY: env['HTTP_TLS_KEY']
  })
  const started = performance.now()
  const running = await startService({ config, log: pino({ level: config.logLevel }), version: '0.0.0-bench' })
  const ready = (): boolean => Object.values(running.views.status()).every((s) => s.state === 'live' || s.state === 'absent')
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 2))
  const coldMs = performance.now() - started
  // Memory is measured when asked, not here: the memory-reducing collection shrinks V8's young
  // generation to its least, and a throughput row right after it ran with four times the floor's
  // scavenges (the floor, never collected so, is not measured through one).
  send({ type: 'ready', coldMs, url: running.url })
  onMessage(async (msg) => {
    if (msg.type === 'rss') send({ type: 'rss', ...await memory() })
    if (msg.type === 'stop') {
      await running.stop()
      process.exit(0)
    }
  })
}

/** What the floor answers at a path: the bytes and headers the service answered there, stored. */
interface Stored { bytes: Buffer, headers: Record<string, string> }

/** The service's answer at `url`, as the floor stores it (headers of the connection left out, as httpBody does). */
async function stored (url: string): Promise<Stored> {
  const r = await fetch(url)
  if (r.status !== 200) throw new Error(`GET ${url} answers ${r.status}`)
  const headers: Record<string, string> = {}
  r.headers.forEach((value, name) => { if (!['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(name)) headers[name] = value })
  return { bytes: Buffer.from(await r.arrayBuffer()), headers }
}

/**
 * Bare fastify and a bare micro endpoint answering stored bytes, as the service answers its
 * encoded answers (a string body would be encoded at every request: a weaker floor). `/floor`
 * answers the one answer it is sent; any other path the answer the service gave there, once the
 * bench has sent the paths (`paths`): the floor of the rows that ask many requests.
 */
async function floor (): Promise<void> {
  const byPath = new Map<string, Stored>()
  onMessage(async (msg) => {
    // Without its own answer to stop, the floor ran until the bench's 10 s SIGKILL at every run's end.
    if (msg.type === 'stop') process.exit(0)
    if (msg.type === 'paths') {
      for (const path of msg.paths) byPath.set(path, await stored(`${msg.origin}${path}`))
      send({ type: 'paths', stored: byPath.size })
      return
    }
    if (msg.type !== 'floor') return
    // With TLS the floor speaks HTTP/2 (and HTTP/1.1 by ALPN), as the gateway does.
    const app = (msg.tls === undefined ? Fastify() : Fastify({ http2: true, https: { allowHTTP1: true, cert: msg.tls.cert, key: msg.tls.key } })) as unknown as FastifyInstance
    const one = Buffer.from(msg.body)
    app.get('/floor', async (_req, reply) => await reply.headers(msg.headers).send(one))
    app.get('/*', async (req, reply) => {
      const answer = byPath.get(req.url)
      return answer === undefined ? await reply.code(404).send() : await reply.headers(answer.headers).send(answer.bytes)
    })
    const url = (await app.listen({ host: '127.0.0.1', port: 0 })).replace('http://', msg.tls === undefined ? 'http://' : 'https://')
    const nc = await connect(natsOptions)
    const bytes = new TextEncoder().encode(msg.body)
    const svc = await nc.services.add({ name: 'bench-floor', version: '0.0.0' })
    svc.addEndpoint('floor', { subject: msg.subject, handler: (_err, m) => { m.respond(bytes) } })
    send({ type: 'floor', url })
  })
}

async function bare (): Promise<void> {
  const app = Fastify()
  app.get('/healthz', async () => ({ ok: true }))
  await app.listen({ host: '127.0.0.1', port: 0 })
  const nc = await connect(natsOptions)
  await nc.jetstreamManager()
  send({ type: 'bare', ...await memory() })
  onMessage(async (msg) => {
    if (msg.type === 'stop') {
      await nc.close()
      process.exit(0)
    }
  })
}

async function watch (): Promise<void> {
  const started = performance.now()
  const nc = await connect(natsOptions)
  const js = nc.jetstream()
  let entries = 0
  let keyBytes = 0
  let valueBytes = 0
  await Promise.all(Object.values(BUCKETS).map(async (bucket) => {
    const kv: KV = await js.views.kv(bucket, { bindOnly: true })
    let done!: () => void
    const initialized = new Promise<void>((resolve) => { done = resolve })
    const w: QueuedIterator<KvEntry> = await kv.watch({ key: '>', initializedFn: () => done() })
    // Buckets keep one revision per key, so the snapshot holds each live key once.
    const loop = (async () => {
      for await (const e of w) {
        if (e.operation !== 'PUT') continue
        entries++
        keyBytes += Buffer.byteLength(e.key)
        valueBytes += e.value.length
      }
    })()
    await initialized
    w.stop()
    await loop
  }))
  send({ type: 'watched', ms: performance.now() - started, entries, keyBytes, valueBytes })
  await nc.close()
  process.exit(0)
}

/**
 * The transport's own pace, where kv.watch cannot go: a raw ordered push consumer of each bucket
 * (the API timeout given, since creating one on a stream of millions of messages outlasts nats.js's
 * 5 s default on nats-server 2.9), read until the stream's last sequence at its start. Then it
 * follows the buckets, and answers the needs bucket's last sequence on a subject when told one: a
 * sweep's floor, asked as the service is asked.
 */
async function consume (): Promise<void> {
  const started = performance.now()
  const nc = await connect(natsOptions)
  const js = nc.jetstream({ timeout: 120_000 })
  const jsm = await nc.jetstreamManager({ timeout: 120_000 })
  let entries = 0
  let keyBytes = 0
  let valueBytes = 0
  const arrived = new Map<string, number>()
  await Promise.all(Object.values(BUCKETS).map(async (bucket) => {
    // A bucket not created yet (the registry's, before the service's first run) holds nothing to read.
    const last = await jsm.streams.info(`KV_${bucket}`).then((info) => info.state.last_seq, () => undefined)
    if (last === undefined) return
    const opts = consumerOpts().orderedConsumer().deliverAll()
    const sub = await js.subscribe(`$KV.${bucket}.>`, opts)
    let loaded!: () => void
    const done = new Promise<void>((resolve) => { loaded = resolve })
    if (last === 0) loaded()
    void (async () => {
      for await (const m of sub) {
        const seq = m.info.streamSequence
        // Buckets keep one revision per key: the load holds each live key once, as the watch's does.
        const op = m.headers?.get('KV-Operation')
        if (seq <= last && op !== 'DEL' && op !== 'PURGE') {
          entries++
          keyBytes += m.subject.length - bucket.length - 5
          valueBytes += m.data.length
        }
        if (seq === last) loaded()
        arrived.set(bucket, seq)
      }
    })()
    await done
  }))
  send({ type: 'consumed', ms: performance.now() - started, entries, keyBytes, valueBytes })
  onMessage(async (msg) => {
    if (msg.type === 'stop') {
      await nc.close()
      process.exit(0)
    }
    if (msg.type !== 'answer') return
    nc.subscribe(msg.subject, { callback: (_err, m) => { m.respond(`{"revision":${arrived.get(BUCKETS.needs) ?? 0}}`) } })
    await nc.flush()
    send({ type: 'answering' })
  })
}

/**
 * Another node's client, in a process of its own as it would be: puts one key and asks the service
 * until it shows, again and again (once at least) until told enough, and says each time taken.
 */
async function probe (): Promise<void> {
  const nc = await connect(natsOptions)
  const kv = await nc.jetstream().views.kv(BUCKETS.needs, { bindOnly: true })
  /** Set by the bench's `enough`, which arrives while a probe runs. */
  const told = { enough: false }
  send({ type: 'probing' })
  onMessage(async (msg) => {
    if (msg.type === 'stop') {
      await nc.close()
      process.exit(0)
    }
    if (msg.type === 'enough') told.enough = true
    if (msg.type !== 'probe') return
    told.enough = false
    const request = new TextEncoder().encode(JSON.stringify({ what: 'needs', node: msg.node }))
    const revisionOf = async (): Promise<number> => revisionIn((await nc.request(msg.subject, request, { timeout: 10_000 })).data)
    const visible: number[] = []
    const acked: number[] = []
    for (let i = 0; i === 0 || !told.enough; i++) {
      const started = performance.now()
      const revision = await kv.put(msg.key, JSON.stringify({ wanted: 9000 + i }))
      acked.push(performance.now() - started)
      while (await revisionOf() < revision);
      visible.push(performance.now() - started)
    }
    send({ type: 'probed', visible, acked })
  })
}

/**
 * A console during a sweep, in a process of its own as a browser would be: asks one URL over HTTP
 * one request at a time until told enough (once at least), and says each answer's time.
 */
async function console_ (): Promise<void> {
  const told = { enough: false }
  onMessage(async (msg) => {
    if (msg.type === 'stop') process.exit(0)
    if (msg.type === 'enough') told.enough = true
    if (msg.type !== 'console') return
    told.enough = false
    const times: number[] = []
    for (let i = 0; i === 0 || !told.enough; i++) {
      const started = performance.now()
      const r = await fetch(msg.url)
      await r.arrayBuffer()
      if (r.status !== 200) throw new Error(`GET ${msg.url} answers ${r.status} during the sweep`)
      times.push(performance.now() - started)
    }
    send({ type: 'asked', times })
  })
  send({ type: 'probing' })
}

const modes: Record<string, () => Promise<void>> = { service, floor, bare, watch, consume, probe, console: console_ }
const mode = modes[process.argv[2] ?? '']
if (!mode) throw new Error(`serve.ts takes one of ${Object.keys(modes).join(', ')}`)
await mode()
