// `npm run bench`: every figure the service promises as a ratio against a floor measured in the
// same run, on nats-servers the bench starts itself, service and floors each in a process of their
// own and measured in alternating rounds (the machine is shared and noisy). Prints one table, and a
// full run keeps itself in bench/runs.json and bench/RESULTS.md beside the two runs before it.

import { createRequire } from 'node:module'
import { cpus } from 'node:os'
import type { KV, NatsConnection } from 'nats'
import { defined } from '../src/domain/defined.js'
import { BUCKETS, keyOf } from '../src/domain/wire/key-shapes.js'
import { NatsServer } from '../testkit/nats-server.js'
import { createClientBuckets } from '../testkit/sample-mesh.js'
import { Child, compileChildren } from './child.js'
import {
  FLOOR_SUBJECT, SUBJECT, alternate, busRate, httpBody, httpLoad, httpLoadPaths, hugeKeys, largeKeys, log, measures, median, memoryOf, p50, percentile,
  noisyRounds, results, rounds, seconds, serviceUser, smallKeys, smallRun, startServiceChild, IN_FLIGHT, type CpuRounds
} from './measure.js'
import { h2Rows } from './h2.js'
import { HandedRefused, HandedServer, type MeshServer } from './handed.js'
import { distinctFiltersRow, heldWaitsRows, liveRowsRow, oneFilterRows, type Held } from './held.js'
import { keptMesh, natsServerVersion } from './huge.js'
import { MODULES, NEEDS_PER_MODULE, ONE_NEED, REQUEST, nodesFor, seedMesh } from './mesh.js'
import { overviewAfterChangeRow, overviewAtScaleRow } from './overview.js'
import { distinctPaths, distinctRequests } from './requests.js'
import { keepRun } from './results.js'
import { revisionIn } from './revision.js'
import { sweepRows } from './sweep.js'
import { formatTable, type Row } from './table.js'

/** What the groups of rows share: the two meshes' servers and connections, and the small mesh's service and floor. */
interface Bench {
  small: NatsServer
  /** The large mesh's server: started by the bench, or the one NATS_URL hands it (handed.ts). */
  large: MeshServer
  /** The handed server's version, which the large mesh's rows name; undefined when the bench started it. */
  handed: string | undefined
  ncSmall: NatsConnection
  ncLarge: NatsConnection
  svcSmall: { child: Child, ready: { url: string } }
  floor: Child
  floorUrl: string
  /** The request every throughput row asks, as the verb takes it, and its answer's size. */
  payload: string
  answerBytes: number
}

/** Puts a need of the asked node and module, then asks until an answer reflects it (ms each). */
async function putToVisible (nc: NatsConnection, n: number): Promise<number[]> {
  const kv = await nc.jetstream().views.kv(BUCKETS.needs, { bindOnly: true })
  const payload = new TextEncoder().encode(JSON.stringify(REQUEST))
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const key = keyOf('needs', { node: REQUEST.node, module: REQUEST.module, kind: 'port', name: `port-${i % 10}` })
    const started = performance.now()
    const revision = await kv.put(key, JSON.stringify({ wanted: 9000 + i, proto: 'tcp' }))
    for (;;) {
      const m = await nc.request(SUBJECT, payload, { timeout: 5000 })
      if (revisionIn(m.data) >= revision) break
    }
    times.push(performance.now() - started)
  }
  return times
}

/**
 * Writes ten needs of the request's node and returns the requests for what changed since just
 * before them: the same request with limits that differ, so that each request misses the answer
 * cache (1024 answers, least recently used out) and the row measures the work of answering.
 */
async function tenChanges (nc: NatsConnection): Promise<string[]> {
  const ask = async (q: object): Promise<{ cursor: string, total: number }> =>
    JSON.parse(new TextDecoder().decode((await nc.request(SUBJECT, new TextEncoder().encode(JSON.stringify(q)), { timeout: 5000 })).data)) as { cursor: string, total: number }
  const { cursor } = await ask({ what: 'needs', node: REQUEST.node })
  const kv: KV = await nc.jetstream().views.kv(BUCKETS.needs, { bindOnly: true })
  for (let i = 0; i < 10; i++) await kv.put(keyOf('needs', { node: REQUEST.node, module: MODULES[1] as string, kind: 'dir', name: `dir-${i}` }), JSON.stringify({ path: `/srv/${i}`, at: Date.now() }))
  const request = { what: 'needs', node: REQUEST.node, since: cursor }
  while ((await ask(request)).total < 10);
  return Array.from({ length: 2048 }, (_, i) => JSON.stringify({ ...request, limit: 11 + i }))
}

const cpuRow = (face: string, cpu: CpuRounds, floor: string): Row =>
  ({ what: `CPU a request, ${face}: µs of the service's CPU per request in the throughput rounds above; floor: ${floor}'s, in the same rounds`, service: median(cpu.service), floor: median(cpu.floor), unit: 'µs', goal: { lower: 1.5 } })

/** The small mesh's throughput over HTTP and the bus, and the CPU each request cost either side. */
async function throughputRows (b: Bench): Promise<Row[]> {
  const rows: Row[] = []
  const needsPath = `/v1/needs?node=${REQUEST.node}&module=${REQUEST.module}`
  if (measures('http')) {
    log('HTTP throughput')
    const cpu: CpuRounds = { service: [], floor: [] }
    const [service, bare] = await alternate(() => httpLoad(`${b.svcSmall.ready.url}${needsPath}`, b.svcSmall.child, cpu.service), () => httpLoad(`${b.floorUrl}/floor`, b.floor, cpu.floor), rounds, true)
    rows.push({ what: `HTTP: needs of one node and module (${NEEDS_PER_MODULE} entries, ${b.answerBytes} B), req/s, ${IN_FLIGHT} connections; floor: bare fastify answering the same stored bytes, headers included`, service, floor: bare, unit: 'req/s', goal: { higher: 0.85 } })
    rows.push(cpuRow('HTTP', cpu, 'bare fastify'))
  }
  if (measures('bus')) {
    log('bus throughput')
    const cpu: CpuRounds = { service: [], floor: [] }
    const [service, bare] = await alternate(() => busRate(b.small, SUBJECT, b.payload, b.svcSmall.child, cpu.service), () => busRate(b.small, FLOOR_SUBJECT, b.payload, b.floor, cpu.floor), noisyRounds, true)
    rows.push({ what: `bus: the same request, req/s, ${IN_FLIGHT} in flight; floor: a bare micro endpoint answering the same stored bytes`, service, floor: bare, unit: 'req/s', goal: { higher: 0.9 } })
    rows.push(cpuRow('bus', cpu, 'the bare micro endpoint'))
  }
  return rows
}

/** Every node-and-module request of the large mesh over HTTP, against the floor answering the bodies the service gave. */
async function distinctRow (b: Bench, svcLarge: { child: Child, ready: { url: string } }): Promise<Row> {
  log('HTTP, distinct questions')
  const paths = distinctPaths(largeKeys)
  b.floor.send({ type: 'paths', origin: svcLarge.ready.url, paths })
  await b.floor.next('paths')
  const [service, bare] = await alternate(() => httpLoadPaths(svcLarge.ready.url, paths, svcLarge.child), () => httpLoadPaths(b.floorUrl, paths, b.floor), rounds, true)
  return { what: `HTTP, distinct questions: every node-and-module request of the ${largeKeys}-key mesh in turn (${paths.length}), req/s, ${IN_FLIGHT} connections; floor: bare fastify answering the same stored bodies`, service, floor: bare, unit: 'req/s', goal: { higher: 0.7 } }
}

/** One need over HTTP one at a time, against the NATS direct get of it. */
async function latencyRow (b: Bench): Promise<Row> {
  const oneKey = keyOf('needs', ONE_NEED)
  // The gateway narrows needs by node, module and kind; limit=1 makes the answer that one need.
  const onePath = `/v1/needs?node=${ONE_NEED.node}&module=${ONE_NEED.module}&kind=${ONE_NEED.kind}&limit=1`
  const one = await httpBody(`${b.svcSmall.ready.url}${onePath}`)
  if (one.status !== 200 || !one.body.includes(`"key":"${oneKey}"`)) throw new Error(`GET ${onePath} answers ${one.status}, not ${oneKey}: ${one.body.slice(0, 300)}`)
  log('one need latency')
  const kv = await b.ncSmall.jetstream().views.kv(BUCKETS.needs, { bindOnly: true })
  const n = smallRun ? 200 : 2000
  const [service, bare] = await alternate(() => p50(() => httpBody(`${b.svcSmall.ready.url}${onePath}`), n), () => p50(() => kv.get(oneKey), n))
  return { what: 'one need over HTTP, p50 latency (ms), one at a time; floor: direct kv.get', service, floor: bare, unit: 'ms', goal: { lower: 1.0 } }
}

/** What the large mesh's load measured, each round in a fresh process: the floors of the huge mesh's rows too. */
interface Loaded { coldMs: number[], watchMs: number[], rss: number[], raw: { entries: number, keyBytes: number, valueBytes: number } }

async function loadLarge (large: MeshServer): Promise<Loaded> {
  log('cold start and RSS, each in a fresh process')
  const out: Loaded = { coldMs: [], watchMs: [], rss: [], raw: { entries: 0, keyBytes: 0, valueBytes: 0 } }
  for (let r = 0; r < rounds; r++) {
    // The floor is the transport's own pace, so it loads with no grants to check.
    const watcher = Child.start('serve', ['watch'], large.adminEnv())
    const watched = await watcher.next('watched')
    out.watchMs.push(watched.ms)
    out.raw = watched
    const fresh = await startServiceChild(large)
    const held = await memoryOf(fresh.child)
    log(`cold start ${fresh.ready.coldMs.toFixed(0)} ms (raw watch ${watched.ms.toFixed(0)} ms), RSS ${(held.rss / 1e6).toFixed(0)} MB (heap used ${(held.heapUsed / 1e6).toFixed(0)} MB of ${(held.heapTotal / 1e6).toFixed(0)}, external ${(held.external / 1e6).toFixed(0)} MB)`)
    out.coldMs.push(fresh.ready.coldMs)
    out.rss.push(held.rss)
    await fresh.child.stop()
  }
  return out
}

/** What a process holds before any entry: the service with empty buckets, and a bare fastify beside a nats.js connection, each fresh and measured the same way. */
async function emptyRss (cleanup: Array<() => Promise<void>>): Promise<{ service: number, bare: number }> {
  log('RSS with empty buckets')
  const empty = await NatsServer.start()
  cleanup.push(() => empty.dispose())
  const nc = await empty.connect()
  await createClientBuckets(nc)
  await nc.close()
  const [service, bare] = await alternate(async () => {
    const idle = await startServiceChild(empty)
    const { rss } = await memoryOf(idle.child)
    await idle.child.stop()
    return rss
  }, async () => {
    const child = Child.start('serve', ['bare'], empty.adminEnv())
    const { rss } = await child.next('bare')
    await child.stop()
    return rss
  })
  return { service, bare }
}

/** The rows at ten times the large mesh, on a server started on the kept huge mesh, beside a service of the large mesh started again. */
async function hugeRows (b: Bench, loaded: Loaded, empty: number): Promise<Row[]> {
  const { server, needs } = await keptMesh(hugeKeys)
  const hugeRounds = smallRun ? 1 : 2
  try {
    const colds: number[] = []
    const floors: number[] = []
    const rsses: number[] = []
    let raw = { entries: 0, keyBytes: 0, valueBytes: 0 }
    let fresh: Awaited<ReturnType<typeof startServiceChild>> | undefined
    for (let r = 0; r < hugeRounds; r++) {
      await fresh?.child.stop()
      const consumer = Child.start('serve', ['consume'], server.adminEnv())
      const consumed = await consumer.next('consumed')
      await consumer.stop()
      raw = consumed
      floors.push(consumed.ms)
      fresh = await startServiceChild(server)
      const held = await memoryOf(fresh.child)
      log(`huge cold start ${fresh.ready.coldMs.toFixed(0)} ms (raw ordered consumer ${(floors.at(-1) as number).toFixed(0)} ms, ${raw.entries} entries), RSS ${(held.rss / 1e6).toFixed(0)} MB`)
      colds.push(fresh.ready.coldMs)
      rsses.push(held.rss)
    }
    const huge = fresh as NonNullable<typeof fresh>
    const again = await startServiceChild(b.large)
    try {
      const [atHuge, atSmall] = await alternate(() => busRate(server, SUBJECT, distinctRequests(needs)), () => busRate(b.small, SUBJECT, distinctRequests(smallKeys)))
      const overview = await overviewAtScaleRow({ url: huge.ready.url, keys: needs }, { url: again.ready.url, keys: largeKeys })
      const perEntry = (median(rsses) - empty) / raw.entries
      const perEntryLarge = (median(loaded.rss) - empty) / loaded.raw.entries
      const at = needs.toLocaleString('en-US')
      return [
        { what: `cold start to ready at ${needs} needs keys, per entry (µs); floor: the same at ${largeKeys} keys`, service: median(colds) * 1000 / raw.entries, floor: median(loaded.coldMs) * 1000 / loaded.raw.entries, unit: 'µs', goal: { lower: 1.15 } },
        { what: `cold start to ready at ${needs} needs keys (ms); floor: a raw ordered consumer of the four buckets (its API timeout raised)`, service: median(colds), floor: median(floors), unit: 'ms', goal: { lower: 1.3 } },
        { what: `bytes held per entry at ${needs} needs keys; floor: the same at ${largeKeys} keys`, service: perEntry, floor: perEntryLarge, unit: 'B', goal: { lower: 1.0 } },
        { what: `bytes held per entry at ${needs} needs keys; floor: mean raw bytes of key and value`, service: perEntry, floor: (raw.keyBytes + raw.valueBytes) / raw.entries, unit: 'B', goal: { lower: 2 } },
        { what: `distinct questions at ${at} keys: every node-and-module request over the bus in turn, uncached; floor: the same at ${smallKeys.toLocaleString('en-US')} keys (ratio: time per answer)`, service: atHuge, floor: atSmall, unit: 'req/s', goal: { lower: 1.5 }, inverse: true },
        overview
      ]
    } finally {
      await again.child.stop()
      await huge.child.stop()
    }
  } finally {
    await server.dispose()
  }
}

/** The rows of the large mesh: load, scale, since, put → visible, held requests, the overview and the sweep. */
async function largeRows (b: Bench, svcLarge: { child: Child, ready: { url: string } }, loaded: Loaded | undefined): Promise<Row[]> {
  const rows: Row[] = []
  if (loaded !== undefined && measures('cold')) rows.push({ what: `cold start to ready (ms), ${largeKeys} needs keys; floor: raw kv.watch of the four buckets`, service: median(loaded.coldMs), floor: median(loaded.watchMs), unit: 'ms', goal: { lower: 1.3 } })
  if (measures('scale')) {
    log('distinct questions at both sizes')
    const [atLarge, atSmall] = await alternate(() => busRate(b.large, SUBJECT, distinctRequests(largeKeys)), () => busRate(b.small, SUBJECT, distinctRequests(smallKeys)))
    rows.push({ what: `distinct questions at ${largeKeys.toLocaleString('en-US')} keys: every node-and-module request over the bus in turn, uncached; floor: the same at ${smallKeys.toLocaleString('en-US')} keys (ratio: time per answer)`, service: atLarge, floor: atSmall, unit: 'req/s', goal: { lower: 1.5 }, inverse: true })
  }
  if (measures('since')) {
    log('since: ten changes at both sizes')
    const [sinceLarge, sinceSmall] = await alternate(async () => busRate(b.large, SUBJECT, await tenChanges(b.ncLarge)), async () => busRate(b.small, SUBJECT, await tenChanges(b.ncSmall)))
    rows.push({ what: `since: ten changes of one node at ${largeKeys} keys, uncached; floor: at ${smallKeys} keys (ratio: time per answer)`, service: sinceLarge, floor: sinceSmall, unit: 'req/s', goal: { lower: 1.5 }, inverse: true })
  }
  if (measures('visible')) {
    log('put to visible')
    const visible = await putToVisible(b.ncLarge, smallRun ? 50 : 500)
    rows.push({ what: `put → visible in an answer, p99 (ms), ${largeKeys} keys`, service: percentile(visible, 0.99), unit: 'ms', goal: { absolute: 10 } })
  }
  const held: Held = { child: svcLarge.child, url: svcLarge.ready.url, nc: b.ncLarge, keys: largeKeys }
  if (measures('streams')) {
    log('event streams')
    rows.push(...await oneFilterRows(held), await distinctFiltersRow(held))
  }
  if (measures('live')) {
    log('live rows')
    rows.push(await liveRowsRow(held))
  }
  if (measures('held')) {
    log('held waits')
    rows.push(...await heldWaitsRows(held))
  }
  if (measures('overview')) {
    log('overview after one change')
    rows.push(await overviewAfterChangeRow({ url: svcLarge.ready.url, keys: largeKeys, nc: b.ncLarge }))
  }
  if (measures('sweep')) {
    log('sweep')
    rows.push(...await sweepRows(b.large, b.ncLarge, nodesFor(largeKeys), largeKeys, { child: svcLarge.child, url: svcLarge.ready.url }))
  }
  return rows
}

/** Starts both meshes' servers (the large one's handed by NATS_URL when set), seeds them, and the small mesh's service and floor. */
async function setUp (cleanup: Array<() => Promise<void>>): Promise<Bench> {
  const handed = await HandedServer.open(process.env, serviceUser)
  if (handed !== undefined) log(`the ${largeKeys}-key mesh on the server NATS_URL hands the bench (${handed.url}, nats-server ${handed.version}); its buckets are deleted at the end`)
  log('compiling the child processes')
  await compileChildren()
  const small = await NatsServer.start()
  cleanup.push(() => small.dispose())
  const large = handed ?? await NatsServer.start()
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
  const payload = JSON.stringify(REQUEST)
  const answer = new TextDecoder().decode((await ncSmall.request(SUBJECT, new TextEncoder().encode(payload))).data)
  const entries = (JSON.parse(answer) as { entries: unknown[] }).entries.length
  if (entries !== NEEDS_PER_MODULE) throw new Error(`the request answered ${entries} entries, not ${NEEDS_PER_MODULE}: ${answer.slice(0, 300)}`)
  const needsPath = `/v1/needs?node=${REQUEST.node}&module=${REQUEST.module}`
  const gateway = await httpBody(`${svcSmall.ready.url}${needsPath}`)
  if (gateway.status !== 200 || gateway.body !== answer) throw new Error(`GET ${needsPath} answers ${gateway.status}, other bytes than the verb: ${gateway.body.slice(0, 300)}`)
  // The floor answers the same bytes, headers included: with the body alone the ratio measured the
  // load generator parsing the service's longer headers as much as the service (RESULTS.md).
  const floor = Child.start('serve', ['floor'], small.adminEnv())
  cleanup.push(() => floor.stop())
  floor.send({ type: 'floor', body: answer, headers: gateway.headers, subject: FLOOR_SUBJECT })
  const floorUrl = (await floor.next('floor')).url
  return { small, large, handed: handed?.version, ncSmall, ncLarge, svcSmall, floor, floorUrl, payload, answerBytes: Buffer.byteLength(answer) }
}

async function main (): Promise<void> {
  const cleanup: Array<() => Promise<void>> = []
  try {
    const b = await setUp(cleanup)
    // The rows of the large mesh name the server they ran on when it was handed; the rest, the bench's own.
    const onLarge = (...rows: Row[]): Row[] => b.handed === undefined ? rows : rows.map((row) => ({ ...row, server: b.handed }))
    // The large mesh's service starts after the small mesh's rows: with a process loaded with it
    // beside them, the HTTP ratio was 0.54-0.58 on a busy two-core machine, 0.87 without. Its
    // first run creates the registry bucket that the raw watch below loads.
    const rows = await throughputRows(b)
    if (measures('latency')) rows.push(await latencyRow(b))
    if (measures('h2')) rows.push(...await h2Rows(b.small, `/v1/needs?node=${REQUEST.node}&module=${REQUEST.module}`))
    const large = await startServiceChild(b.large)
    cleanup.push(() => large.child.stop())
    if (measures('distinct')) rows.push(...onLarge(await distinctRow(b, large)))
    const loaded = measures('cold') || measures('memory') || measures('huge') ? await loadLarge(b.large) : undefined
    rows.push(...onLarge(...await largeRows(b, large, loaded)))
    let empty = { service: 0, bare: 0 }
    if (measures('memory') || measures('huge')) empty = await emptyRss(cleanup)
    if (measures('memory') && loaded !== undefined) {
      rows.push(...onLarge({ what: `bytes held per entry: (RSS loaded − RSS with empty buckets) / entries, ${loaded.raw.entries} entries of the four buckets; floor: mean raw bytes of key and value`, service: (median(loaded.rss) - empty.service) / loaded.raw.entries, floor: (loaded.raw.keyBytes + loaded.raw.valueBytes) / loaded.raw.entries, unit: 'B', goal: { lower: 2 } }))
      rows.push({ what: 'RSS with empty buckets (MB); floor: a bare fastify and nats.js process measured the same way', service: empty.service / 1e6, floor: empty.bare / 1e6, unit: 'MB', goal: { lower: 1.3 } })
    }
    if (measures('huge') && loaded !== undefined) {
      // The large mesh's service stops first: the huge one's load takes both cores and much memory.
      await large.child.stop()
      rows.push(...await hugeRows(b, loaded, empty.service))
    }
    await report(rows, b.handed)
  } finally {
    for (const fn of cleanup.reverse()) await fn().catch((err) => log(`cleanup: ${(err as Error).message}`))
  }
}

/** Prints the table, and keeps a full run beside the two before it. */
async function report (rows: Row[], handed: string | undefined): Promise<void> {
  const version = await natsServerVersion()
  const table = formatTable(rows.map((row) => ({ server: version, ...row })))
  process.stdout.write(`${table}\n`)
  if (results === undefined) return
  const cpu = cpus()
  const servers = handed === undefined ? `nats-server ${version}` : `nats-server ${version}, the ${largeKeys}-key mesh's ${handed} handed by NATS_URL`
  const machine = `${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown'}), Node ${process.version}, ${servers}, nats.js ${natsJsVersion()}`
  await keepRun({ date: new Date().toISOString().slice(0, 16).replace('T', ' '), machine, ...defined({ handed }), rows: rows.map((row) => ({ server: version, ...row })) }, 'bench/runs.json', results, [
    '# Bench results',
    '',
    `Written by every full run of \`npm run bench\`; the newest: ${machine}.`,
    `The service signed in as ${serviceUser === 'admin' ? 'admin (no grants to check: --service-user admin)' : 'its least-privilege user of deploy/accounts.conf'}.`,
    `Sizes ${smallKeys}, ${largeKeys} and ${hugeKeys} needs keys (${MODULES.length} modules a node, ${NEEDS_PER_MODULE} needs each); ${seconds} s per load run, ${rounds} alternating rounds (${noisyRounds} for the bus and the sweep), medians; the throughput rows after a round of each side not counted.`,
    'What each side of a row does is in "What each row measures" below. Figures come from a shared machine: compare the ratios, not the absolute figures.'
  ])
}

function natsJsVersion (): string {
  return (createRequire(import.meta.url)('nats/package.json') as { version: string }).version
}

await main().catch((err: unknown) => {
  if (!(err instanceof HandedRefused)) throw err
  process.stderr.write(`npm run bench: ${err.message}\n`)
  process.exitCode = 2
})
