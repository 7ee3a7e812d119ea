// Prometheus metrics for the whole process on a registry of its own (two instances in one test
// process must not share counters). Views are read at scrape time; the writer's runs are counted as they end.

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { RegistryRun, ViewStatus } from './domain/wire/schemas.js'
import type { Views } from './domain/follow/views.js'

export interface Metrics {
  readonly registry: Registry
  /** Counts one answered request of a face (`bus` or `http`) and its latency. */
  observe (face: 'bus' | 'http', route: string, outcome: string, seconds: number): void
  registryRun (run: RegistryRun): void
  /** Counts a request the gateway's token check refused, by reason (never by token). */
  refused (reason: RefusalReason): void
  /** An event stream opened or closed (the open streams gauge). */
  streamOpened (): void
  streamClosed (): void
  /** Counts one event sent on a stream, by type. */
  eventSent (type: string): void
}

/** Why the token check refused: no token, a token it does not know, or a token that may not read this. */
export type RefusalReason = 'missing' | 'unknown' | 'forbidden'

/** `views` is read at scrape time only, so metrics can exist before the views do. */
export function createMetrics (views: () => Views, defaults = true): Metrics {
  const registry = new Registry()
  if (defaults) collectDefaultMetrics({ register: registry })
  const requests = new Counter({
    name: 'mesh_provisioner_requests_total',
    help: 'Requests answered, by face (bus, http), route or question, and outcome (ok or an error code); an event stream is counted by mesh_provisioner_event_streams and mesh_provisioner_events_sent_total instead.',
    labelNames: ['face', 'route', 'outcome'] as const,
    registers: [registry]
  })
  const latency = new Histogram({
    name: 'mesh_provisioner_request_duration_seconds',
    help: 'Time to answer a request, by face and route or question: until the answer is handed to the transport.',
    labelNames: ['face', 'route'] as const,
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry]
  })
  const perBucket = (name: string, help: string, read: (s: ViewStatus) => number) => new Gauge({
    name,
    help,
    labelNames: ['bucket'] as const,
    registers: [registry],
    collect () {
      for (const s of Object.values(views().status())) this.set({ bucket: s.bucket }, read(s))
    }
  })
  perBucket('mesh_provisioner_view_keys', 'Entries held in the view of each bucket.', (s) => s.keys)
  perBucket('mesh_provisioner_view_out_of_shape', 'Keys of each bucket that do not fit its shape.', (s) => s.outOfShape)
  perBucket('mesh_provisioner_view_revision', 'The last revision each view has seen.', (s) => s.revision)
  perBucket('mesh_provisioner_view_live', '1 when the view of the bucket is live, 0 otherwise.', (s) => (s.state === 'live' ? 1 : 0))
  new Gauge({ // eslint-disable-line no-new
    name: 'mesh_provisioner_nats_connected',
    help: '1 while the NATS connection is up.',
    registers: [registry],
    collect () { this.set(views().connected() ? 1 : 0) }
  })
  const runs = new Counter({
    name: 'mesh_provisioner_registry_runs_total',
    help: 'Registry writer runs, by outcome.',
    labelNames: ['outcome'] as const,
    registers: [registry]
  })
  const kinds = new Counter({
    name: 'mesh_provisioner_registry_kinds_total',
    help: 'Kinds the registry writer wrote, left as they were, or deleted.',
    labelNames: ['action'] as const,
    registers: [registry]
  })
  const refusals = new Counter({
    name: 'mesh_provisioner_http_refused_total',
    help: 'Requests the gateway\'s token check refused, by reason: missing (no token), unknown (a token it does not know), forbidden (a token that may not read this).',
    labelNames: ['reason'] as const,
    registers: [registry]
  })
  const streams = new Gauge({
    name: 'mesh_provisioner_event_streams',
    help: 'Event streams open (GET /v1/{what}/events).',
    registers: [registry]
  })
  const events = new Counter({
    name: 'mesh_provisioner_events_sent_total',
    help: 'Events sent on event streams, by type (put, delete, outOfShape, synced, stale, live, reset).',
    labelNames: ['type'] as const,
    registers: [registry]
  })
  return {
    registry,
    observe (face, route, outcome, seconds) {
      requests.inc({ face, route, outcome })
      latency.observe({ face, route }, seconds)
    },
    registryRun (run) {
      runs.inc({ outcome: run.ok ? 'ok' : 'failed' })
      kinds.inc({ action: 'wrote' }, run.wrote.length)
      kinds.inc({ action: 'left' }, run.left.length)
      kinds.inc({ action: 'deleted' }, run.deleted.length)
    },
    refused (reason) {
      refusals.inc({ reason })
    },
    streamOpened () {
      streams.inc()
    },
    streamClosed () {
      streams.dec()
    },
    eventSent (type) {
      events.inc({ type })
    }
  }
}
