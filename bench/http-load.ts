// HTTP load over many paths from a process of its own: autocannon's API, each request taking the
// next path of the list in turn across all connections, so that a row can ask every request of a
// mesh rather than one cached answer. The CLI (measure.ts httpLoad) asks one path.

import autocannon, { type Request } from 'autocannon'

export interface HttpLoad {
  type: 'http-load'
  /** The origin, e.g. http://127.0.0.1:8080. */
  origin: string
  /** Asked in turn, one a request. */
  paths: string[]
  connections: number
  /** How long, and autocannon's sample (ms): req/s are counted a sample (measure.ts loadSampleMs). */
  seconds: number
  sampleMs: number
  warmupSeconds: number
}
export interface HttpLoadResult { type: 'http-load', rps: number, requests: number, non2xx: number, errors: number }

process.once('message', (job: HttpLoad) => {
  void run(job).then((result) => { process.send?.(result); process.exit(0) }, (err) => { console.error(err); process.exit(1) })
})

async function run (job: HttpLoad): Promise<HttpLoadResult> {
  let turn = 0
  const next = (request: Request): Request => ({ ...request, path: job.paths[turn++ % job.paths.length] as string })
  const warmup = Math.round(job.warmupSeconds)
  const result = await autocannon({
    url: job.origin,
    connections: job.connections,
    duration: job.seconds,
    sampleInt: job.sampleMs,
    requests: [{ setupRequest: next }],
    ...(warmup > 0 ? { warmup: { connections: job.connections, duration: warmup } } : {})
  })
  const warmed = (result as { warmup?: { requests: { total: number } } }).warmup?.requests.total ?? 0
  return { type: 'http-load', rps: result.requests.average * 1000 / job.sampleMs, requests: result.requests.total + warmed, non2xx: result.non2xx, errors: result.errors }
}
