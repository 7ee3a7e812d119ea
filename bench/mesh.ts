// The bench's mesh: a few hundred nodes of twenty modules, fifty needs each, written fast (many
// JetStream publishes in flight) so that 300k keys seed in seconds rather than minutes.

import type { NatsConnection } from 'nats'
import { BUCKETS, keyOf } from '../src/domain/wire/key-shapes.js'
import { createClientBuckets } from '../testkit/sample-mesh.js'
import { writeStored } from '../testkit/stored-writes.js'

export const MODULES = ['gitea', 'keycloak', 'route-proxy', 'claude-code', 'mesh-build-node', 'postgres', 'node-tools', 'wireguard', 'mail', 'grafana',
  'prometheus', 'step-ca', 'loki', 'minio', 'nextcloud', 'vaultwarden', 'jellyfin', 'matrix', 'ntfy', 'restic']
const KINDS = ['secret', 'config', 'port', 'dir', 'bound']
const NAMES_PER_KIND = 10
/** Needs per node and module: the size of the answer the throughput rows ask for. */
export const NEEDS_PER_MODULE = KINDS.length * NAMES_PER_KIND

/** The request every throughput row asks: the needs of one node and module. */
export const REQUEST = { what: 'needs', node: nodeName(0), module: MODULES[0] as string }
/** One need, for the latency row: the first key of its node, module and kind. */
export const ONE_NEED = { node: nodeName(0), module: MODULES[0] as string, kind: 'secret', name: 'secret-0' }

/** The module of each node that the mesh leaves pending (a need written after its applied entry). */
export const PENDING_MODULE = MODULES[1] as string

export function nodeName (i: number): string {
  return `node-${String(i).padStart(4, '0')}`
}

/** Nodes needed for about `needs` needs keys. */
export function nodesFor (needs: number): number {
  return Math.max(1, Math.round(needs / (MODULES.length * NEEDS_PER_MODULE)))
}

/** A writer's JSON for one need, shaped like the sample mesh's (files, ports, accounts). */
function needValue (node: string, module: string, kind: string, name: string): string {
  switch (kind) {
    case 'secret': return JSON.stringify({ file: `/run/secrets/${module}/${name}`, owner: 65534, group: 65534, mode: '0400', rotate: '90d' })
    case 'config': return JSON.stringify({ keys: ['site', 'mail', 'log-level'], file: `/etc/${module}/${name}.json`, reload: `systemctl reload ${module}` })
    case 'port': return JSON.stringify({ wanted: 8000 + name.length, proto: 'tcp', bind: '127.0.0.1', expose: `${module}.${node}.internal` })
    case 'dir': return JSON.stringify({ path: `/var/lib/${module}/${name}`, owner: module, mode: '0750', backup: true })
    default: return JSON.stringify({ provider: 'gitea', account: `${module}-${node}`, scopes: ['read:repository', 'write:issue'] })
  }
}

export interface Put { subject: string, data: Uint8Array }

/** Every write of the mesh for nodes [0, nodes), in key order within a node. */
function * meshPuts (nodes: number): Generator<Put> {
  const utf8 = new TextEncoder()
  const put = (bucket: string, key: string, value: string): Put => ({ subject: `$KV.${bucket}.${key}`, data: utf8.encode(value) })
  for (let n = 0; n < nodes; n++) {
    const node = nodeName(n)
    for (const module of MODULES) {
      for (const kind of KINDS) {
        for (let i = 0; i < NAMES_PER_KIND; i++) {
          const name = `${kind}-${i}`
          yield put(BUCKETS.needs, keyOf('needs', { node, module, kind, name }), needValue(node, module, kind, name))
        }
      }
      yield put(BUCKETS.applied, keyOf('applied', { node, module }), JSON.stringify({ plan: `${module}@${n + 1}.4.2`, appliedAt: '2026-11-29T09:00:00Z', ok: true, steps: 12 }))
      yield put(BUCKETS.collect, keyOf('collect', { node, collection: 'shell:zsh:normal', contributor: module }), JSON.stringify({ lines: [`alias ${module}-logs='journalctl -u ${module}'`] }))
      yield put(BUCKETS.collect, keyOf('collect', { node, collection: 'environment', contributor: module }), JSON.stringify({ [`${module.toUpperCase().replaceAll('-', '_')}_URL`]: `https://${module}.${node}.internal` }))
    }
    // One module a node with a need written after its applied entry: the overview's pending rows.
    yield put(BUCKETS.needs, keyOf('needs', { node, module: PENDING_MODULE, kind: 'config', name: 'config-0' }), needValue(node, PENDING_MODULE, 'config', 'config-1'))
  }
  // A few keys out of shape, as a real mesh has: every answer about their bucket lists them.
  yield put(BUCKETS.needs, `${nodeName(0)}.gitea`, '{"stray":"two tokens"}')
  yield put(BUCKETS.applied, `${nodeName(0)}.wireguard.extra`, 'not json at all')
  yield put(BUCKETS.collect, `${nodeName(0)}.shell=3azsh.gitea`, '{"stray":"lower-case escape"}')
}

/**
 * Every needs key of the mesh of `nodes` nodes written again with a new value, as every node's
 * client does after a mesh-wide change: a sweep.
 */
export function * sweepPuts (nodes: number, round: number): Generator<Put> {
  const utf8 = new TextEncoder()
  for (let n = 0; n < nodes; n++) {
    const node = nodeName(n)
    for (const module of MODULES) {
      for (const kind of KINDS) {
        for (let i = 0; i < NAMES_PER_KIND; i++) {
          const key = keyOf('needs', { node, module, kind, name: `${kind}-${i}` })
          yield { subject: `$KV.${BUCKETS.needs}.${key}`, data: utf8.encode(JSON.stringify({ sweep: round, at: n, want: `${module}/${kind}-${i}` })) }
        }
      }
    }
  }
}

/** Writes `puts` with `inFlight` publishes pending; the last ack's time and the highest revision written. */
export async function writeAll (nc: NatsConnection, puts: Iterator<Put>, inFlight = 2000): Promise<{ writes: number, lastAck: number, revision: number }> {
  const js = nc.jetstream()
  let writes = 0
  let revision = 0
  let lastAck = 0
  const worker = async (): Promise<void> => {
    for (let p = puts.next(); p.done !== true; p = puts.next()) {
      const ack = await js.publish(p.value.subject, p.value.data)
      writes++
      revision = Math.max(revision, ack.seq)
      lastAck = performance.timeOrigin + performance.now()
    }
  }
  await Promise.all(Array.from({ length: inFlight }, worker))
  return { writes, lastAck, revision }
}

export interface SeedResult {
  needs: number
  writes: number
  seconds: number
}

/** Creates the client buckets and writes the mesh of `nodes` nodes with `inFlight` publishes pending. */
export async function seedMesh (nc: NatsConnection, nodes: number, inFlight = 2000): Promise<SeedResult> {
  await createClientBuckets(nc)
  const started = performance.now()
  const { writes } = await writeAll(nc, meshPuts(nodes), inFlight)
  return { needs: nodes * MODULES.length * NEEDS_PER_MODULE, writes, seconds: (performance.now() - started) / 1000 }
}

/** The mesh of seedMesh, written without waiting for each write's ack (testkit/stored-writes.ts): for a test that needs the mesh, not the pace of writing it. */
export async function seedMeshUnacked (nc: NatsConnection, nodes: number): Promise<SeedResult> {
  await createClientBuckets(nc)
  const started = performance.now()
  const writes = await writeStored(nc, meshPuts(nodes), [BUCKETS.needs, BUCKETS.applied, BUCKETS.collect].map((bucket) => `KV_${bucket}`))
  return { needs: nodes * MODULES.length * NEEDS_PER_MODULE, writes, seconds: (performance.now() - started) / 1000 }
}
