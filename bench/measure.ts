// What every group of the bench shares: its settings (the command line), the log, the statistics,
// the alternating rounds, and the ways of starting and loading a service or a floor.

import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { parseArgs } from 'node:util'
import { request } from 'undici'
import type { MeshServer } from './handed.js'
import type { Memory } from './serve.js'
import { busLoad, Child, httpLoadOf } from './child.js'

const { values: args } = parseArgs({
  options: {
    small: { type: 'boolean', default: false },
    keys: { type: 'string' },
    huge: { type: 'string' },
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    streams: { type: 'string' },
    results: { type: 'string' },
    only: { type: 'string' },
    'service-user': { type: 'string', default: 'mesh-provisioner' }
  }
})
export const smallRun = args.small
export const [smallKeys, largeKeys] = (args.keys ?? (smallRun ? '1000,3000' : '10000,300000')).split(',').map(Number) as [number, number]
/** The mesh at ten times today's (issue 21): seeded once into a store the bench keeps. */
export const hugeKeys = Number(args.huge ?? (smallRun ? 6000 : 3_000_000))
export const seconds = Number(args.seconds ?? (smallRun ? 1 : 5))
/**
 * autocannon's sample (ms): it ends a run at a sample's end and counts req/s a sample, so a run
 * shorter than a second (the smoke test's) is one sample of its own length, scaled to a second,
 * where it took its whole second before; a run of whole seconds samples each second, as by default.
 */
export const loadSampleMs = Math.min(1000, seconds * 1000)
/** A load run's length as autocannon takes it: whole seconds, or the fraction of one a smoke run asks. */
export const loadSeconds = seconds >= 1 ? Math.round(seconds) : seconds
export const rounds = Number(args.rounds ?? (smallRun ? 1 : 3))
/**
 * Rounds of the rows whose median swung most between full runs with no change of theirs: the bus
 * (the service ~16 % busy, the load's client and nats-server setting the pace) and the sweep (lags
 * of a few ms at its end, equal on both sides in most rounds, one poll apart in others).
 */
export const noisyRounds = smallRun ? rounds : rounds + 2
/** Event streams open at once on one node's filter (HTTP_MAX_STREAMS allows 1000 by default). */
export const streamCount = Number(args.streams ?? (smallRun ? 20 : 1000))
/** Which groups of rows to measure (`--only cold,memory`): a focused run while working on one goal. */
export const GROUPS = ['http', 'bus', 'latency', 'h2', 'distinct', 'cold', 'scale', 'since', 'visible', 'streams', 'live', 'held', 'overview', 'sweep', 'memory', 'huge'] as const
export type Group = typeof GROUPS[number]
const only = new Set(args.only?.split(',') ?? GROUPS)
for (const g of only) if (!(GROUPS as readonly string[]).includes(g)) throw new Error(`--only takes groups among ${GROUPS.join(', ')}; not ${g}`)
export const measures = (group: Group): boolean => only.has(group)
// A focused run does not rewrite the page of full runs.
export const results = args.results ?? (smallRun || args.only !== undefined ? undefined : 'bench/RESULTS.md')
/** Who the service signs in as: its least-privilege user, or admin to measure the code without the grants' cost. */
export const serviceUser = args['service-user'] === 'admin' ? 'admin' : 'mesh-provisioner'
export const IN_FLIGHT = 64
export const SUBJECT = 'mesh-provisioner.provisioning'
export const FLOOR_SUBJECT = 'bench.floor'
/** Where the sweep's raw consumer answers the needs bucket's last sequence, as the service answers its revision. */
export const CONSUMED_SUBJECT = 'bench.consumed.needs'

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid] as number : ((s[mid - 1] as number) + (s[mid] as number)) / 2
}
export const percentile = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] as number
const began = performance.now()
export const log = (text: string): void => { process.stderr.write(`bench ${((performance.now() - began) / 1000).toFixed(1)}s: ${text}\n`) }

/** Runs `a` and `b` alternately `n` times (after a round of each not counted, when `warm`); the median of each. */
export async function alternate (a: () => Promise<number>, b: () => Promise<number>, n = rounds, warm = false): Promise<[number, number]> {
  const as: number[] = []
  const bs: number[] = []
  if (warm && !smallRun) {
    // A round each, not counted: a process's first seconds under load are its JIT's (RESULTS.md).
    log(`warm-up: ${(await a()).toFixed(0)} against ${(await b()).toFixed(0)}`)
  }
  for (let r = 0; r < n; r++) {
    as.push(await a())
    bs.push(await b())
    log(`round ${r}: ${as.at(-1)?.toFixed(0)} against ${bs.at(-1)?.toFixed(0)}`)
  }
  return [median(as), median(bs)]
}

export async function startServiceChild (server: MeshServer, env: Record<string, string> = {}): Promise<{ child: Child, ready: { coldMs: number, url: string } }> {
  const child = Child.start('serve', ['service'], { ...(serviceUser === 'admin' ? server.adminEnv() : server.serviceEnv()), LOG_LEVEL: 'error', ...env })
  return { child, ready: await child.next('ready') }
}

/**
 * The CPU a request cost `child` since `before` (its cpuMicros then), over `requests` answered:
 * logged, and kept in `into` when given (the rows `CPU a request, …` are medians of these).
 */
function cpuOf (child: Child, before: number, requests: number, into?: number[]): void {
  const micros = (child.cpuMicros() - before) / requests
  log(`${child.name}: ${micros.toFixed(1)} µs of CPU a request`)
  into?.push(micros)
}

/** The CPU a request of each side of a throughput row, one figure a counted round. */
export interface CpuRounds { service: number[], floor: number[] }

/** req/s of `url` under load; the CPU a request cost `server` goes to `cpu` (a process stuck in a slower mode shows there first). */
export async function httpLoad (url: string, server: Child, cpu?: number[]): Promise<number> {
  const cpuBefore = server.cpuMicros()
  const bin = createRequire(import.meta.url).resolve('autocannon/autocannon.js')
  // A smoke run skips the warmup.
  const warmup = Math.round(seconds / 5)
  const load = ['-c', String(IN_FLIGHT), '-d', String(loadSeconds), '-L', String(loadSampleMs)]
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
  cpuOf(server, cpuBefore, runs.reduce((sum, run) => sum + run.requests.total, 0), cpu)
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx answers and ${r.errors} errors under load`)
  return r.requests.average * 1000 / loadSampleMs
}

/** req/s of `paths` of `origin` asked in turn under load; the CPU a request cost `server` goes to `cpu`, as httpLoad's. */
export async function httpLoadPaths (origin: string, paths: string[], server: Child, cpu?: number[]): Promise<number> {
  const cpuBefore = server.cpuMicros()
  const r = await httpLoadOf({ type: 'http-load', origin, paths, connections: IN_FLIGHT, seconds: loadSeconds, sampleMs: loadSampleMs, warmupSeconds: seconds / 5 })
  cpuOf(server, cpuBefore, r.requests, cpu)
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${origin}: ${r.non2xx} non-2xx answers and ${r.errors} errors under load over ${paths.length} paths`)
  return r.rps
}

/** req/s of `subject` under load from a process of its own; with `answering`, the CPU a request cost it, as httpLoad gives. */
export async function busRate (server: MeshServer, subject: string, payload: string | string[], answering?: Child, cpu?: number[]): Promise<number> {
  const cpuBefore = answering?.cpuMicros() ?? 0
  const r = await busLoad(server.adminEnv(), { subject, payloads: Array.isArray(payload) ? payload : [payload], inFlight: IN_FLIGHT, seconds, warmupSeconds: seconds / 5 })
  if (r.errors > 0) throw new Error(`${subject}: ${r.errors} error replies under load`)
  // The warm-up's requests are not counted: taken at the run's pace, as the CPU covers them too.
  if (answering !== undefined) cpuOf(answering, cpuBefore, r.rps * seconds * 1.2, cpu)
  return r.rps
}

/** p50 of `n` sequential calls of `fn` (ms). */
export async function p50 (fn: (i: number) => Promise<unknown>, n: number): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await fn(i)
    times.push(performance.now() - t)
  }
  return median(times)
}

/** Headers the floor does not copy: those of the connection and those its server writes itself. */
const OWN_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'])

export async function httpBody (url: string): Promise<{ status: number, body: string, headers: Record<string, string> }> {
  const r = await request(url)
  const headers = Object.fromEntries(Object.entries(r.headers).filter(([name, value]) => !OWN_HEADERS.has(name) && typeof value === 'string')) as Record<string, string>
  return { status: r.statusCode, body: await r.body.text(), headers }
}

/** The RSS of a service child once its garbage is collected. */
export async function memoryOf (child: Child): Promise<Memory> {
  child.send({ type: 'rss' })
  return await child.next('rss')
}

export async function rssOf (child: Child): Promise<number> {
  return (await memoryOf(child)).rss
}
