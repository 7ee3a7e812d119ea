// A sweep (issue 21): every needs key of the mesh written again as fast as NATS takes it, as after a
// mesh-wide change. The service and a raw ordered consumer follow the same writes; each is timed
// from the last write's ack until a request to it answers the last revision (both asked alike: a
// consumer that told of its arrival itself saved the request's round trip the service paid), and a probe on a node outside the mesh
// measures put → visible while the sweep runs, from a process of its own as that node's client is (in
// the bench's process, its put and requests waited behind the sweep's 2000 publishes in flight).
// Beside it a console asks a node's needs over HTTP, and the service's RSS after the sweeps is
// compared with its RSS after the load: what users meet while, and after, the mesh rewrites itself.

import type { NatsConnection } from 'nats'
import { keyOf } from '../src/domain/wire/key-shapes.js'
import type { MeshServer } from './handed.js'
import { Child } from './child.js'
import { MODULES, NEEDS_PER_MODULE, nodeName, sweepPuts, writeAll } from './mesh.js'
import { CONSUMED_SUBJECT, SUBJECT, log, median, noisyRounds, percentile, rssOf } from './measure.js'
import { revisionIn } from './revision.js'
import type { Row } from './table.js'

const utf8 = new TextEncoder()
const PROBE = { node: 'probe-node', module: 'gitea', kind: 'port', name: 'probe' }

/** The revision `subject` answers to `request`. */
async function revisionOf (nc: NatsConnection, request: object, subject = SUBJECT): Promise<number> {
  const m = await nc.request(subject, utf8.encode(JSON.stringify(request)), { timeout: 10_000 })
  return revisionIn(m.data)
}

/** Asks until the answer `subject` gives about every needs key reflects `revision`; the ms since the last ack it took. */
async function reaches (nc: NatsConnection, revision: number, lastAck: number, subject = SUBJECT): Promise<number> {
  for (;;) {
    if (await revisionOf(nc, { what: 'needs', limit: 1 }, subject) >= revision) return performance.timeOrigin + performance.now() - lastAck
  }
}

/** The service the sweep measures: its process (for its RSS) and its gateway (for the console's request). */
export interface Swept { child: Child, url: string }

export async function sweepRows (server: MeshServer, nc: NatsConnection, nodes: number, needs: number, service: Swept): Promise<Row[]> {
  const floor = Child.start('serve', ['consume'], server.adminEnv())
  const prober = Child.start('serve', ['probe'], server.adminEnv())
  const asker = Child.start('serve', ['console'])
  // A console's request while the mesh rewrites itself: a node's needs, which every sweep changes.
  const consoleUrl = `${service.url}/v1/needs?node=${nodeName(1)}`
  try {
    await prober.next('probing')
    await asker.next('probing')
    const loaded = await rssOf(service.child)
    await floor.next('consumed')
    floor.send({ type: 'answer', subject: CONSUMED_SUBJECT })
    await floor.next('answering')
    const services: number[] = []
    const floors: number[] = []
    const probes: number[] = []
    const acks: number[] = []
    const asked: number[] = []
    for (let r = 0; r < noisyRounds; r++) {
      prober.send({ type: 'probe', key: keyOf('needs', PROBE), node: PROBE.node, subject: SUBJECT })
      asker.send({ type: 'console', url: consoleUrl })
      const started = performance.now()
      const { writes, lastAck, revision } = await writeAll(nc, sweepPuts(nodes, r))
      prober.send({ type: 'enough' })
      asker.send({ type: 'enough' })
      const [service, raw] = await Promise.all([reaches(nc, revision, lastAck), reaches(nc, revision, lastAck, CONSUMED_SUBJECT)])
      const probed = await prober.next('probed')
      asked.push(...(await asker.next('asked')).times)
      probes.push(...probed.visible)
      acks.push(...probed.acked)
      services.push(service)
      floors.push(raw)
      log(`sweep ${r}: ${writes} writes in ${((lastAck - performance.timeOrigin - started) / 1000).toFixed(1)} s; last ack → service ${services.at(-1)?.toFixed(1)} ms, raw consumer ${floors.at(-1)?.toFixed(1)} ms; probe p99 ${percentile(probes, 0.99).toFixed(1)} ms (its put's ack p99 ${percentile(acks, 0.99).toFixed(1)} ms); console p99 ${percentile(asked, 0.99).toFixed(1)} ms over ${asked.length} answers`)
    }
    const swept = await rssOf(service.child)
    return [
      {
        what: `sweep: every needs key of the ${needs}-key mesh rewritten as fast as NATS takes it, last ack → the service answers its revision (ms); floor: a raw ordered consumer reading the same writes`,
        service: median(services),
        floor: median(floors),
        unit: 'ms',
        goal: { lower: 1.3 }
      },
      { what: 'during the sweep: put → visible p99 of a probe key on another node (ms)', service: percentile(probes, 0.99), unit: 'ms', goal: { absolute: 50 } },
      { what: `during the sweep, a console question: GET /v1/needs?node=${nodeName(1)} (its ${MODULES.length * NEEDS_PER_MODULE} needs) one at a time from another process through every sweep, p99 (ms)`, service: percentile(asked, 0.99), unit: 'ms', goal: { absolute: 50 } },
      { what: `memory after a sweep: RSS after ${noisyRounds} sweeps of every needs key (MB); floor: RSS after the load, both after the same collection`, service: swept / 1e6, floor: loaded / 1e6, unit: 'MB', goal: { lower: 1.2 } }
    ]
  } finally {
    await asker.stop()
    await prober.stop()
    await floor.stop()
  }
}
