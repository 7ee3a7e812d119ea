// `npm run bench`: every figure of issues 5, 8 and 12 as a ratio against a floor measured in the same
// run, on nats-servers the bench starts itself, service and floors each in a process of their own
// and measured in alternating rounds (the machine is shared and noisy). Prints one table.

import { spawn } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { cpus } from 'node:os'
import { parseArgs } from 'node:util'
import type { KV, NatsConnection } from 'nats'
import { request } from 'undici'
import { BUCKETS, keyOf } from '../src/domain/wire/key-shapes.js'
import { NatsServer } from '../testkit/nats-server.js'
import { createClientBuckets } from '../testkit/sample-mesh.js'
import type { Memory } from './serve.js'
import { busLoad, Child, compileChildren } from './child.js'
import { MODULES, NEEDS_PER_MODULE, ONE_NEED, QUESTION, nodesFor, seedMesh } from './mesh.js'
import { openStreams, StreamRefused } from './streams.js'
import { formatTable, type Row } from './table.js'

const { values: args } = parseArgs({
  options: {
    small: { type: 'boolean', default: false },
    keys: { type: 'string' },
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    streams: { type: 'string' },
    results: { type: 'string' },
    only: { type: 'string' },
    'service-user': { type: 'string', default: 'mesh-provisioner' }
  }
})
const smallRun = args.small
const [smallKeys, largeKeys] = (args.keys ?? (smallRun ? '1000,3000' : '10000,300000')).split(',').map(Number) as [number, number]
const seconds = Number(args.seconds ?? (smallRun ? 1 : 5))
const rounds = Number(args.rounds ?? (smallRun ? 1 : 3))
/** Event streams open at once on one node's filter (HTTP_MAX_STREAMS allows 1000 by default). */
const streamCount = Number(args.streams ?? (smallRun ? 20 : 1000))
/** Which groups of rows to measure (`--only cold,memory`): a focused run while working on one goal. */
const GROUPS = ['http', 'bus', 'latency', 'cold', 'scale', 'since', 'visible', 'streams', 'memory'] as const
const only = new Set(args.only?.split(',') ?? GROUPS)
for (const g of only) if (!(GROUPS as readonly string[]).includes(g)) throw new Error(`--only takes groups among ${GROUPS.join(', ')}; not ${g}`)
const measures = (group: typeof GROUPS[number]): boolean => only.has(group)
// A focused run does not rewrite the page of full runs.
const results = args.results ?? (smallRun || args.only !== undefined ? undefined : 'bench/RESULTS.md')
/** Who the service signs in as: its least-privilege user, or admin to measure the code without the grants' cost. */
const serviceUser = args['service-user'] === 'admin' ? 'admin' : 'mesh-provisioner'
const IN_FLIGHT = 64
const SUBJECT = 'mesh-provisioner.provisioning'
const FLOOR_SUBJECT = 'bench.floor'

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid] as number : ((s[mid - 1] as number) + (s[mid] as number)) / 2
}
const percentile = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] as number
const began = performance.now()
const log = (text: string): void => { process.stderr.write(`bench ${((performance.now() - began) / 1000).toFixed(1)}s: ${text}\n`) }

/** Runs `a` and `b` alternately `rounds` times; the median of each. */
async function alternate (a: () => Promise<number>, b: () => Promise<number>): Promise<[number, number]> {
  const as: number[] = []
  const bs: number[] = []
  for (let r = 0; r < rounds; r++) {
    as.push(await a())
    bs.push(await b())
    log(`round ${r}: ${as.at(-1)?.toFixed(0)} against ${bs.at(-1)?.toFixed(0)}`)
  }
  return [median(as), median(bs)]
}

/** The bench's own hand on a server (seeding, floors, load): the shipped configuration's admin. */
function adminEnv (server: NatsServer): Record<string, string> {
  const { user, pass } = NatsServer.credentials('admin')
  return { NATS_URL: server.url, NATS_USER: user, NATS_PASSWORD: pass }
}

async function startServiceChild (server: NatsServer): Promise<{ child: Child, ready: { coldMs: number, url: string } }> {
  const child = Child.start('serve', ['service'], { ...(serviceUser === 'admin' ? adminEnv(server) : server.serviceEnv()), LOG_LEVEL: 'error' })
  return { child, ready: await child.next('ready') }
}

/** req/s of `url` under load; logs the CPU a request cost `server` (a process stuck in a slower mode shows there first). */
async function httpLoad (url: string, server: Child): Promise<number> {
  const cpuBefore = server.cpuMicros()
  const bin = createRequire(import.meta.url).resolve('autocannon/autocannon.js')
  // autocannon counts whole seconds; a smoke run skips the warmup.
  const warmup = Math.round(seconds / 5)
  const load = ['-c', String(IN_FLIGHT), '-d', String(Math.max(1, Math.round(seconds)))]
  const out = await new Promise<string>((resolve, reject) => {
    const p = spawn(process.execPath, [bin, '-j', ...load, ...(warmup > 0 ? ['--warmup', '[', '-c', String(IN_FLIGHT), '-d', String(warmup), ']'] : []), url], { stdio: ['ignore', 'pipe', 'ignore'] })
    let text = ''
    p.stdout.on('data', (d: Buffer) => { text += d.toString() })
    p.once('error', reject)
    p.once('exit', (code) => code === 0 ? resolve(text) : reject(new Error(`autocannon exited ${code}`)))
  })
  // With --warmup, autocannon prints the warmup's result first: the run's is the last line.
  const runs = out.trim().split('\n').map((line) => JSON.parse(line) as { requests: { average: number, total: number }, non2xx: number, errors: number })
  const r = runs.at(-1) as typeof runs[number]
  const answered = runs.reduce((sum, run) => sum + run.requests.total, 0)
  log(`${server.name}: ${((server.cpuMicros() - cpuBefore) / answered).toFixed(1)} µs of CPU a request`)
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx answers and ${r.errors} errors under load`)
  return r.requests.average
}

async function busRate (server: NatsServer, subject: string, payload: string | string[]): Promise<number> {
  const r = await busLoad(adminEnv(server), { subject, payloads: Array.isArray(payload) ? payload : [payload], inFlight: IN_FLIGHT, seconds, warmupSeconds: seconds / 5 })
  if (r.errors > 0) throw new Error(`${subject}: ${r.errors} error replies under load`)
  return r.rps
}

/** p50 of `n` sequential calls of `fn` (ms). */
async function p50 (fn: () => Promise<unknown>, n: number): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await fn()
    times.push(performance.now() - t)
  }
  return median(times)
}

/** Headers the floor does not copy: those of the connection and those its server writes itself. */
const OWN_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'])

async function httpBody (url: string): Promise<{ status: number, body: string, headers: Record<string, string> }> {
  const r = await request(url)
  const headers = Object.fromEntries(Object.entries(r.headers).filter(([name, value]) => !OWN_HEADERS.has(name) && typeof value === 'string')) as Record<string, string>
  return { status: r.statusCode, body: await r.body.text(), headers }
}

/** Puts a need of the asked node and module, then asks until an answer reflects it (ms each). */
async function putToVisible (nc: NatsConnection, n: number): Promise<number[]> {
  const kv = await nc.jetstream().views.kv(BUCKETS.needs, { bindOnly: true })
  const payload = new TextEncoder().encode(JSON.stringify(QUESTION))
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const key = keyOf('needs', { node: QUESTION.node, module: QUESTION.module, kind: 'port', name: `port-${i % 10}` })
    const started = performance.now()
    const revision = await kv.put(key, JSON.stringify({ wanted: 9000 + i, proto: 'tcp' }))
    for (;;) {
      const m = await nc.request(SUBJECT, payload, { timeout: 5000 })
      const seen = Number(/"revision":(\d+)/.exec(new TextDecoder().decode(m.data.subarray(0, 200)))?.[1])
      if (seen >= revision) break
    }
    times.push(performance.now() - started)
  }
  return times
}

/**
 * Writes ten needs of the question's node and returns the questions for what changed since just
 * before them: the same question with limits that differ, so that each request misses the answer
 * cache (1024 answers, least recently used out) and the row measures the work of answering.
 */
async function tenChanges (nc: NatsConnection): Promise<string[]> {
  const ask = async (q: object): Promise<{ cursor: string, total: number }> =>
    JSON.parse(new TextDecoder().decode((await nc.request(SUBJECT, new TextEncoder().encode(JSON.stringify(q)), { timeout: 5000 })).data)) as { cursor: string, total: number }
  const { cursor } = await ask({ what: 'needs', node: QUESTION.node })
  const kv = await nc.jetstream().views.kv(BUCKETS.needs, { bindOnly: true })
  for (let i = 0; i < 10; i++) await kv.put(keyOf('needs', { node: QUESTION.node, module: MODULES[1] as string, kind: 'dir', name: `dir-${i}` }), JSON.stringify({ path: `/srv/${i}`, at: Date.now() }))
  const question = { what: 'needs', node: QUESTION.node, since: cursor }
  while ((await ask(question)).total < 10);
  return Array.from({ length: 2048 }, (_, i) => JSON.stringify({ ...question, limit: 11 + i }))
}

/** The RSS of a service child once its garbage is collected. */
async function memoryOf (child: Child): Promise<Memory> {
  child.send({ type: 'rss' })
  return await child.next('rss')
}

async function rssOf (child: Child): Promise<number> {
  return (await memoryOf(child)).rss
}

/**
 * Opens `streamCount` event streams on one node's needs, then writes needs of that node one at a
 * time, each once every stream has its event: the time from the write to the event at each stream,
 * and what the idle streams held in the service.
 */
async function streamRows (nc: NatsConnection, service: Child, url: string): Promise<Row[]> {
  const path = `/v1/needs/events?node=${QUESTION.node}`
  const eventWhat = `event streams: ${streamCount} open on one node's filter, put → event p99 (ms), ${largeKeys} keys`
  const memoryWhat = `memory per open idle event stream (KB): RSS with ${streamCount} streams open − without, per stream`
  const before = await rssOf(service)
  let open: Awaited<ReturnType<typeof openStreams>>
  try {
    open = await openStreams(`${url}${path}`, streamCount)
  } catch (err) {
    if (!(err instanceof StreamRefused)) throw err
    const missing = `GET ${path} answers ${err.status}: the gateway does not serve event streams yet`
    return [{ what: eventWhat, missing, unit: 'ms', goal: { absolute: 50 } }, { what: memoryWhat, missing, unit: 'KB', goal: { absolute: 30 } }]
  }
  try {
    const held = (await rssOf(service) - before) / streamCount / 1024
    const kv: KV = await nc.jetstream().views.kv(BUCKETS.needs, { bindOnly: true })
    /** Writes need `i`, resolving with the time from the write to its event at each stream, and the write's ack. */
    const putOne = async (i: number): Promise<{ acked: number, arrivals: number[] }> => {
      const key = keyOf('needs', { node: QUESTION.node, module: MODULES[2] as string, kind: 'config', name: `config-${i % 10}` })
      const arrivals = open.streams.map((s) => s.putOf(key, 0))
      const started = performance.now()
      await kv.put(key, JSON.stringify({ keys: ['site'], file: `/etc/${i}.json` }))
      const acked = performance.now() - started
      return { acked, arrivals: (await Promise.all(arrivals)).map((at) => at - started) }
    }
    // Each key written twice first, untimed: nats-server 2.9 acked the eleventh put 47-57 ms late
    // in every run (the others 0-12 ms), the first to replace a message written moments before,
    // once: the store's cost, not the fan-out's this row is about.
    for (let i = 0; i < 20; i++) await putOne(i)
    const times: number[] = []
    const acks: number[] = []
    for (let i = 0; i < (smallRun ? 10 : 100); i++) {
      const { acked, arrivals } = await putOne(i)
      acks.push(acked)
      times.push(...arrivals)
    }
    // The spread, and the writes' own acks: a slow ack is the store's, not the fan-out's.
    const at = (p: number): string => percentile(times, p).toFixed(1)
    log(`event streams: put → event p50 ${at(0.5)}, p90 ${at(0.9)}, p99 ${at(0.99)}, max ${at(1)} ms; the puts' acks p99 ${percentile(acks, 0.99).toFixed(1)} ms`)
    return [
      { what: eventWhat, service: percentile(times, 0.99), unit: 'ms', goal: { absolute: 50 } },
      { what: memoryWhat, service: held, unit: 'KB', goal: { absolute: 30 } }
    ]
  } finally {
    open.close()
  }
}

async function main (): Promise<void> {
  const cleanup: Array<() => Promise<void>> = []
  try {
    log('compiling the child processes')
    await compileChildren(log)
    const small = await NatsServer.start()
    cleanup.push(() => small.dispose())
    const large = await NatsServer.start()
    cleanup.push(() => large.dispose())
    const ncSmall = await small.connect()
    const ncLarge = await large.connect()
    cleanup.push(async () => { await ncSmall.close(); await ncLarge.close() })
    for (const [server, nc, keys] of [[small, ncSmall, smallKeys], [large, ncLarge, largeKeys]] as const) {
      const seeded = await seedMesh(nc, nodesFor(keys))
      log(`seeded ${seeded.needs} needs keys (${seeded.writes} writes) on ${server.url} in ${seeded.seconds.toFixed(1)} s`)
    }

    const svcSmall = await startServiceChild(small)
    cleanup.push(() => svcSmall.child.stop())
    const payload = JSON.stringify(QUESTION)
    const answer = new TextDecoder().decode((await ncSmall.request(SUBJECT, new TextEncoder().encode(payload))).data)
    const entries = (JSON.parse(answer) as { entries: unknown[] }).entries.length
    if (entries !== NEEDS_PER_MODULE) throw new Error(`the question answered ${entries} entries, not ${NEEDS_PER_MODULE}: ${answer.slice(0, 300)}`)

    const rows: Row[] = []
    const needsPath = `/v1/needs?node=${QUESTION.node}&module=${QUESTION.module}`
    const gateway = await httpBody(`${svcSmall.ready.url}${needsPath}`)
    // The floor answers the same bytes, headers included: with the body alone the ratio measured the
    // load generator parsing the service's longer headers as much as the service (RESULTS.md).
    const floor = Child.start('serve', ['floor'], adminEnv(small))
    cleanup.push(() => floor.stop())
    floor.send({ type: 'floor', body: answer, headers: gateway.headers, subject: FLOOR_SUBJECT })
    const floorUrl = (await floor.next('floor')).url
    const what = `HTTP: needs of one node and module (${entries} entries, ${Buffer.byteLength(answer)} B), req/s, ${IN_FLIGHT} connections; floor: bare fastify answering the same bytes, headers included`
    if (gateway.status !== 200 || gateway.body !== answer) throw new Error(`GET ${needsPath} answers ${gateway.status}, other bytes than the verb: ${gateway.body.slice(0, 300)}`)
    if (measures('http')) {
      log('HTTP throughput')
      const [service, bare] = await alternate(() => httpLoad(`${svcSmall.ready.url}${needsPath}`, svcSmall.child), () => httpLoad(`${floorUrl}/floor`, floor))
      rows.push({ what, service, floor: bare, unit: 'req/s', goal: { higher: 0.8 } })
    }

    if (measures('bus')) {
      log('bus throughput')
      const [busService, busFloor] = await alternate(() => busRate(small, SUBJECT, payload), () => busRate(small, FLOOR_SUBJECT, payload))
      rows.push({ what: `bus: the same question, req/s, ${IN_FLIGHT} in flight`, service: busService, floor: busFloor, unit: 'req/s', goal: { higher: 0.9 } })
    }

    const oneKey = keyOf('needs', ONE_NEED)
    // The gateway narrows needs by node, module and kind; limit=1 makes the answer that one need.
    const onePath = `/v1/needs?node=${ONE_NEED.node}&module=${ONE_NEED.module}&kind=${ONE_NEED.kind}&limit=1`
    const one = await httpBody(`${svcSmall.ready.url}${onePath}`)
    if (one.status !== 200 || !one.body.includes(`"key":"${oneKey}"`)) throw new Error(`GET ${onePath} answers ${one.status}, not ${oneKey}: ${one.body.slice(0, 300)}`)
    if (measures('latency')) {
      log('one need latency')
      const kv = await ncSmall.jetstream().views.kv(BUCKETS.needs, { bindOnly: true })
      const n = smallRun ? 200 : 2000
      const [service, bare] = await alternate(() => p50(() => httpBody(`${svcSmall.ready.url}${onePath}`), n), () => p50(() => kv.get(oneKey), n))
      rows.push({ what: 'one need over HTTP, p50 latency (ms), one at a time; floor: direct kv.get', service, floor: bare, unit: 'ms', goal: { lower: 1.0 } })
    }

    // Started only after the rows above, which measure the small mesh: with a process loaded with the
    // large one beside them, the HTTP ratio was 0.54-0.58 on a busy two-core machine, 0.87 without.
    // Its first run creates the registry bucket that the raw watch below loads.
    const svcLarge = await startServiceChild(large)
    cleanup.push(() => svcLarge.child.stop())
    const loads = measures('cold') || measures('memory')
    if (loads) log('cold start and RSS, each in a fresh process')
    const colds: number[] = []
    const rsses: number[] = []
    let watchMs: number[] = []
    let raw = { entries: 0, keyBytes: 0, valueBytes: 0 }
    for (let r = 0; r < (loads ? rounds : 0); r++) {
      // The floor is the transport's own pace, so it loads with no grants to check.
      const watcher = Child.start('serve', ['watch'], adminEnv(large))
      const watched = await watcher.next('watched')
      watchMs = [...watchMs, watched.ms]
      raw = watched
      const fresh = await startServiceChild(large)
      const held = await memoryOf(fresh.child)
      log(`cold start ${fresh.ready.coldMs.toFixed(0)} ms (raw watch ${watched.ms.toFixed(0)} ms), RSS ${(held.rss / 1e6).toFixed(0)} MB (heap used ${(held.heapUsed / 1e6).toFixed(0)} MB of ${(held.heapTotal / 1e6).toFixed(0)}, external ${(held.external / 1e6).toFixed(0)} MB)`)
      colds.push(fresh.ready.coldMs)
      rsses.push(held.rss)
      await fresh.child.stop()
    }
    if (measures('cold')) rows.push({ what: `cold start to ready (ms), ${largeKeys} needs keys; floor: raw kv.watch of the four buckets`, service: median(colds), floor: median(watchMs), unit: 'ms', goal: { lower: 1.3 } })

    if (measures('scale')) {
      log('the same question at both sizes')
      const [atLarge, atSmall] = await alternate(() => busRate(large, SUBJECT, payload), () => busRate(small, SUBJECT, payload))
      rows.push({ what: `the same question over the bus at ${largeKeys} keys; floor: at ${smallKeys} keys (ratio: time per answer)`, service: atLarge, floor: atSmall, unit: 'req/s', goal: { lower: 1.5 }, inverse: true })
    }

    if (measures('since')) {
      log('since: ten changes at both sizes')
      const [sinceLarge, sinceSmall] = await alternate(async () => busRate(large, SUBJECT, await tenChanges(ncLarge)), async () => busRate(small, SUBJECT, await tenChanges(ncSmall)))
      rows.push({ what: `since: ten changes of one node at ${largeKeys} keys, uncached; floor: at ${smallKeys} keys (ratio: time per answer)`, service: sinceLarge, floor: sinceSmall, unit: 'req/s', goal: { lower: 1.5 }, inverse: true })
    }

    if (measures('visible')) {
      log('put to visible')
      const visible = await putToVisible(ncLarge, smallRun ? 50 : 500)
      rows.push({ what: `put → visible in an answer, p99 (ms), ${largeKeys} keys`, service: percentile(visible, 0.99), unit: 'ms', goal: { absolute: 50 } })
    }

    if (measures('streams')) {
      log(`${streamCount} event streams`)
      rows.push(...await streamRows(ncLarge, svcLarge.child, svcLarge.ready.url))
    }
    if (measures('memory')) {
      // What a process holds before any entry: the service with empty buckets, and a bare fastify
      // listening beside a nats.js connection, each a fresh process measured the same way.
      log('RSS with empty buckets')
      const empty = await NatsServer.start()
      cleanup.push(() => empty.dispose())
      const ncEmpty = await empty.connect()
      await createClientBuckets(ncEmpty)
      await ncEmpty.close()
      const [emptyRss, bareRss] = await alternate(async () => {
        const idle = await startServiceChild(empty)
        const { rss } = await memoryOf(idle.child)
        await idle.child.stop()
        return rss
      }, async () => {
        const bare = Child.start('serve', ['bare'], adminEnv(empty))
        const { rss } = await bare.next('bare')
        await bare.stop()
        return rss
      })
      rows.push({ what: `bytes held per entry: (RSS loaded − RSS with empty buckets) / entries, ${raw.entries} entries of the four buckets; floor: mean raw bytes of key and value`, service: (median(rsses) - emptyRss) / raw.entries, floor: (raw.keyBytes + raw.valueBytes) / raw.entries, unit: 'B', goal: { lower: 2 } })
      rows.push({ what: 'RSS with empty buckets (MB); floor: a bare fastify and nats.js process measured the same way', service: emptyRss / 1e6, floor: bareRss / 1e6, unit: 'MB', goal: { lower: 1.3 } })
    }

    const table = formatTable(rows)
    process.stdout.write(`${table}\n`)
    if (results !== undefined) {
      // The page's hand-written findings (from `## Findings` on) outlive the run that rewrites the table.
      const before = await readFile(results, 'utf8').catch(() => '')
      const findings = before.includes('\n## Findings') ? before.slice(before.indexOf('\n## Findings') + 1) : ''
      await writeFile(results, `${resultsPage(table, ncSmall.info?.version ?? 'unknown')}${findings === '' ? '' : `\n${findings}`}`)
    }
  } finally {
    for (const fn of cleanup.reverse()) await fn().catch((err) => log(`cleanup: ${(err as Error).message}`))
  }
}

function resultsPage (table: string, natsVersion: string): string {
  const cpu = cpus()
  return [
    '# Bench results',
    '',
    `Last full run of \`npm run bench\`: ${new Date().toISOString().slice(0, 10)}, ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown'}),`,
    `Node ${process.version}, nats-server ${natsVersion}, nats.js ${natsJsVersion()}.`,
    `The service signed in as ${serviceUser === 'admin' ? 'admin (no grants to check: --service-user admin)' : 'its least-privilege user of deploy/accounts.conf'}.`,
    `Sizes ${smallKeys} and ${largeKeys} needs keys (${MODULES.length} modules a node, ${NEEDS_PER_MODULE} needs each); ${seconds} s per load run, ${rounds} alternating rounds, medians.`,
    'Figures come from a shared machine where other engineers run test suites: compare the ratios, not the absolute figures.',
    '',
    table,
    ''
  ].join('\n')
}

function natsJsVersion (): string {
  return (createRequire(import.meta.url)('nats/package.json') as { version: string }).version
}

await main()
