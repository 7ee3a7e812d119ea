// Bus load from a process of its own: asks one subject with a fixed number of requests in flight
// for a while and reports the rate, so the loader never shares an event loop with what it measures.
// Connects with the settings of docs/running.md (NATS_URL, NATS_USER, NATS_PASSWORD) the bench sets.

import { connect } from 'nats'

export interface BusLoad {
  subject: string
  /** Asked in turn, one a request: several requests keep a cache of answers from making every request the same. */
  payloads: string[]
  inFlight: number
  seconds: number
  warmupSeconds: number
}
export interface BusLoadResult { type: 'bus-load', requests: number, errors: number, rps: number, p50Ms: number, replyBytes: number }

process.once('message', (job: BusLoad) => {
  void run(job).then((result) => { process.send?.(result); process.exit(0) }, (err) => { console.error(err); process.exit(1) })
})

async function run (job: BusLoad): Promise<BusLoadResult> {
  const nc = await connect({ servers: process.env['NATS_URL'] as string, user: process.env['NATS_USER'] as string, pass: process.env['NATS_PASSWORD'] as string })
  const payloads = job.payloads.map((p) => new TextEncoder().encode(p))
  let turn = 0
  let requests = 0
  let errors = 0
  let replyBytes = 0
  let counting = false
  let countedFrom = 0
  const times: number[] = []
  const end = performance.now() + (job.warmupSeconds + job.seconds) * 1000
  const worker = async (): Promise<void> => {
    for (let t = performance.now(); t < end; t = performance.now()) {
      const m = await nc.request(job.subject, payloads[turn++ % payloads.length] as Uint8Array, { timeout: 10_000 })
      if (!counting) continue
      if (m.headers?.get('Nats-Service-Error-Code')) errors++
      replyBytes = m.data.length
      requests++
      times.push(performance.now() - t)
    }
  }
  setTimeout(() => { counting = true; countedFrom = performance.now() }, job.warmupSeconds * 1000)
  await Promise.all(Array.from({ length: job.inFlight }, worker))
  const seconds = (performance.now() - countedFrom) / 1000
  await nc.close()
  times.sort((a, b) => a - b)
  return { type: 'bus-load', requests, errors, rps: requests / seconds, p50Ms: times[times.length >> 1] ?? NaN, replyBytes }
}
