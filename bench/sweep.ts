// A sweep (issue 21): every needs key of the mesh written again as fast as NATS takes it, as after a
// mesh-wide change. The service and a raw ordered consumer follow the same writes; each is timed
// from the last write's ack until it has the last revision, and a probe on a node outside the mesh
// measures put → visible while the sweep runs.

import type { NatsConnection } from 'nats'
import { BUCKETS, keyOf } from '../src/domain/wire/key-shapes.js'
import type { NatsServer } from '../testkit/nats-server.js'
import { Child } from './child.js'
import { sweepPuts, writeAll } from './mesh.js'
import { SUBJECT, adminEnv, log, median, percentile, rounds } from './measure.js'
import type { Row } from './table.js'

const utf8 = new TextEncoder()
const PROBE = { node: 'probe-node', module: 'gitea', kind: 'port', name: 'probe' }

/** The revision of an answer to `question`. */
async function revisionOf (nc: NatsConnection, question: object): Promise<number> {
  const m = await nc.request(SUBJECT, utf8.encode(JSON.stringify(question)), { timeout: 10_000 })
  return Number(/"revision":(\d+)/.exec(new TextDecoder().decode(m.data.subarray(0, 200)))?.[1])
}

/** Asks until the service's answer about every needs key reflects `revision`; when it did (ms since the epoch). */
async function serviceReaches (nc: NatsConnection, revision: number): Promise<number> {
  for (;;) {
    if (await revisionOf(nc, { what: 'needs', limit: 1 }) >= revision) return performance.timeOrigin + performance.now()
  }
}

/** Puts the probe key and asks for it until it shows, again and again until `stop`; each time in ms. */
async function probe (nc: NatsConnection, stop: () => boolean): Promise<number[]> {
  const kv = await nc.jetstream().views.kv(BUCKETS.needs, { bindOnly: true })
  const key = keyOf('needs', PROBE)
  const times: number[] = []
  for (let i = 0; !stop(); i++) {
    const started = performance.now()
    const revision = await kv.put(key, JSON.stringify({ wanted: 9000 + i }))
    while (await revisionOf(nc, { what: 'needs', node: PROBE.node }) < revision);
    times.push(performance.now() - started)
  }
  return times
}

export async function sweepRows (server: NatsServer, nc: NatsConnection, nodes: number, needs: number): Promise<Row[]> {
  const floor = Child.start('serve', ['consume'], adminEnv(server))
  try {
    await floor.next('consumed')
    const services: number[] = []
    const floors: number[] = []
    const probes: number[] = []
    for (let r = 0; r < rounds; r++) {
      let swept = false
      const probing = probe(nc, () => swept)
      const started = performance.now()
      const { writes, lastAck, revision } = await writeAll(nc, sweepPuts(nodes, r))
      swept = true
      floor.send({ type: 'follow', bucket: BUCKETS.needs, until: revision })
      const [serviceAt, followed] = await Promise.all([serviceReaches(nc, revision), floor.next('followed')])
      probes.push(...await probing)
      services.push(serviceAt - lastAck)
      floors.push(followed.at - lastAck)
      log(`sweep ${r}: ${writes} writes in ${((lastAck - performance.timeOrigin - started) / 1000).toFixed(1)} s; last ack → service ${services.at(-1)?.toFixed(1)} ms, raw consumer ${floors.at(-1)?.toFixed(1)} ms; probe p99 ${percentile(probes, 0.99).toFixed(1)} ms`)
    }
    return [
      {
        what: `sweep: every needs key of the ${needs}-key mesh rewritten as fast as NATS takes it, last ack → the service answers its revision (ms); floor: a raw ordered consumer reading the same writes`,
        service: median(services),
        floor: median(floors),
        unit: 'ms',
        goal: { lower: 1.3 }
      },
      { what: 'during the sweep: put → visible p99 of a probe key on another node (ms)', service: percentile(probes, 0.99), unit: 'ms', goal: { absolute: 250 } }
    ]
  } finally {
    await floor.stop()
  }
}
