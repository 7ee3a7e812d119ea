// Prometheus metrics for the whole process on a registry of its own (two instances in one test
// process must not share counters). Views, readiness and each node's last write are read at scrape
// time through narrow ports; the writer's runs are counted as they end. deploy/prometheus/alerts.yml
// and deploy/grafana/ read these names: a test holds them to what is exported.

import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client'
import { MODULE_STATES, type RegistryRun, type ViewState, type ViewStatus } from './domain/wire/schemas.js'
import type { Totals } from './domain/answers/overview.js'
import type { Views } from './domain/follow/views.js'
import { PlainCounter, PlainHistogram } from './plain-metrics.js'

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

const VIEW_STATES: readonly ViewState[] = ['starting', 'absent', 'loading', 'live']

/** Why the token check refused: no token, a token it does not know, or a token that may not read this. */
export type RefusalReason = 'missing' | 'unknown' | 'forbidden'

/** What the gauges read at scrape time beside the views; each absent one leaves its gauge out. */
export interface MetricSources {
  /** Whether /readyz would answer 200. */
  ready?: () => boolean
  /** Whether the verb is served. */
  verbServing?: () => boolean
  /** HTTP_MAX_STREAMS, beside the open streams, so that an alert needs no copy of the setting. */
  maxStreams?: number
  /** Each node's last write (epoch ms); absent when METRICS_NODE_LAST_WRITE is false. */
  lastWrites?: () => Iterable<[node: string, epochMs: number]>
  /** The mesh at a glance's totals: module rows per state, the earliest waitingSince, unanswered needs (undefined while a bucket cannot be read). */
  totals?: () => Totals | undefined
}

/**
 * prom-client's defaults that are gauges named like counters (`promtool check metrics` says so);
 * each is the sum of its labelled twin (`nodejs_active_handles{type}`, ...), which stays.
 */
const MISNAMED_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']

/** `views` is read at scrape time only, so metrics can exist before the views do. A metric goes in its family's function below. */
export function createMetrics (views: () => Views, defaults = true, sources: MetricSources = {}): Metrics {
  const registry = new Registry()
  if (defaults) {
    collectDefaultMetrics({ register: registry })
    for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name)
  }
  const requests = requestMetrics(registry)
  viewMetrics(registry, views)
  sourceMetrics(registry, sources)
  if (sources.totals !== undefined) meshMetrics(registry, sources.totals)
  new Gauge({ // eslint-disable-line no-new
    name: 'mesh_provisioner_nats_connected',
    help: '1 while the NATS connection is up.',
    registers: [registry],
    collect () { this.set(views().connected() ? 1 : 0) }
  })
  return { registry, ...requests, ...registryMetrics(registry), ...streamMetrics(registry) }
}

/** The requests each face answered: a count by outcome and the latency, in plain numbers (plain-metrics.ts). */
function requestMetrics (registry: Registry): Pick<Metrics, 'observe'> {
  const requests = new PlainCounter(registry, {
    name: 'mesh_provisioner_requests_total',
    help: 'Requests answered, by face (bus, http), route or what was asked, and outcome (ok or an error code); an event stream is counted by mesh_provisioner_event_streams and mesh_provisioner_events_sent_total instead.',
    labelNames: ['face', 'route', 'outcome']
  })
  const latency = new PlainHistogram(registry, {
    name: 'mesh_provisioner_request_duration_seconds',
    help: 'Time to answer a request, by face and route or what was asked: until the answer is handed to the transport.',
    labelNames: ['face', 'route'],
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]
  })
  return {
    observe (face, route, outcome, seconds) {
      requests.inc(face, route, outcome)
      latency.observe([face, route], seconds)
    }
  }
}

/** The views, one series a bucket, read at scrape time. */
function viewMetrics (registry: Registry, views: () => Views): void {
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
  perBucket('mesh_provisioner_view_stale', '1 while the view answers from what it last knew (cut off, catching up, reloading), 0 otherwise.', (s) => (s.stale ? 1 : 0))
  new Gauge({ // eslint-disable-line no-new
    name: 'mesh_provisioner_view_state',
    help: 'The state of the view of each bucket, one series a state (1 for the current one): starting, absent (the bucket is missing), loading, live.',
    labelNames: ['bucket', 'state'] as const,
    registers: [registry],
    collect () {
      for (const s of Object.values(views().status())) {
        for (const state of VIEW_STATES) this.set({ bucket: s.bucket, state }, s.state === state ? 1 : 0)
      }
    }
  })
}

/** The process's readiness, its streams' bound and each node's last write: each only when its source is given. */
function sourceMetrics (registry: Registry, sources: MetricSources): void {
  const flag = (name: string, help: string, read: (() => boolean) | undefined): void => {
    if (read === undefined) return
    new Gauge({ name, help, registers: [registry], collect () { this.set(read() ? 1 : 0) } }) // eslint-disable-line no-new
  }
  flag('mesh_provisioner_ready', '1 when /readyz answers 200: connected, every view live or its bucket known absent, and the verb served.', sources.ready)
  flag('mesh_provisioner_verb_serving', '1 while the verb (and discovery) is served, 0 while starting or after its subscription ended.', sources.verbServing)
  if (sources.maxStreams !== undefined) {
    const most = sources.maxStreams
    new Gauge({ name: 'mesh_provisioner_event_streams_max', help: 'Event streams this instance opens at most: HTTP_MAX_STREAMS, or less when the open file limit lowers it (the warning at start says so).', registers: [registry], collect () { this.set(most) } }) // eslint-disable-line no-new
  }
  const lastWrites = sources.lastWrites
  if (lastWrites !== undefined) {
    new Gauge({ // eslint-disable-line no-new
      name: 'mesh_provisioner_node_last_write_timestamp_seconds',
      help: 'When each node\'s provisioner client last wrote a key that is still there (the latest `updated` of its entries in needs, applied and collect); one series a node (METRICS_NODE_LAST_WRITE=false leaves it out).',
      labelNames: ['node'] as const,
      registers: [registry],
      collect () {
        // A node whose keys are all gone has no series any more.
        this.reset()
        for (const [node, ms] of lastWrites()) this.set({ node }, ms / 1000)
      }
    })
  }
}

/** The mesh at a glance: module rows per state, the longest wait, unanswered needs. */
function meshMetrics (registry: Registry, totals: () => Totals | undefined): void {
  // Read once a scrape for the three: each walks every module row (kept rows: no entry is read).
  let read: { at: number, totals: Totals | undefined } | undefined
  const now = (): Totals | undefined => {
    const at = Date.now()
    if (read === undefined || at - read.at > 50) read = { at, totals: totals() }
    return read.totals
  }
  new Gauge({ // eslint-disable-line no-new
    name: 'mesh_provisioner_modules',
    help: 'Module rows (a module on a node with needs or an applied entry) in each state: unapplied, pending, applied, orphaned; absent while needs or applied cannot be read.',
    labelNames: ['state'] as const,
    registers: [registry],
    collect () {
      this.reset()
      const t = now()
      if (t !== undefined) for (const state of MODULE_STATES) this.set({ state }, t.states[state])
    }
  })
  new Gauge({ // eslint-disable-line no-new
    name: 'mesh_provisioner_waiting_since_timestamp_seconds',
    help: 'The earliest waitingSince of the mesh: when the need that has waited longest to be applied was written; absent while nothing waits.',
    registers: [registry],
    collect () {
      this.reset()
      const ms = now()?.waitingSinceMs
      if (ms !== undefined) this.set(ms / 1000)
    }
  })
  new Gauge({ // eslint-disable-line no-new
    name: 'mesh_provisioner_needs_unanswered',
    help: 'Needs of a kind that no entry of the registry answers: no domain will ever provide them.',
    registers: [registry],
    collect () {
      this.reset()
      const t = now()
      if (t !== undefined) this.set(t.unanswered)
    }
  })
}

/** The registry writer's runs, counted as they end. */
function registryMetrics (registry: Registry): Pick<Metrics, 'registryRun'> {
  const runs = new Counter({
    name: 'mesh_provisioner_registry_runs_total',
    help: 'Registry writer runs, by outcome.',
    labelNames: ['outcome'] as const,
    registers: [registry]
  })
  const lastRunOk = new Gauge({
    name: 'mesh_provisioner_registry_last_run_ok',
    help: '1 when the registry writer\'s last run left the registry holding exactly the compiled answers, 0 when it failed.',
    registers: [registry]
  })
  const lastRunAt = new Gauge({
    name: 'mesh_provisioner_registry_last_run_timestamp_seconds',
    help: 'When the registry writer\'s last run started.',
    registers: [registry]
  })
  const kinds = new Counter({
    name: 'mesh_provisioner_registry_kinds_total',
    help: 'Kinds the registry writer wrote, left as they were, or deleted.',
    labelNames: ['action'] as const,
    registers: [registry]
  })
  return {
    registryRun (run) {
      runs.inc({ outcome: run.ok ? 'ok' : 'failed' })
      lastRunOk.set(run.ok ? 1 : 0)
      lastRunAt.set(Date.parse(run.at) / 1000)
      kinds.inc({ action: 'wrote' }, run.wrote.length)
      kinds.inc({ action: 'left' }, run.left.length)
      kinds.inc({ action: 'deleted' }, run.deleted.length)
    }
  }
}

/** The gateway's token refusals and its event streams. */
function streamMetrics (registry: Registry): Pick<Metrics, 'refused' | 'streamOpened' | 'streamClosed' | 'eventSent'> {
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
  // Counted at every event a stream sends: in plain numbers (plain-metrics.ts).
  const events = new PlainCounter(registry, {
    name: 'mesh_provisioner_events_sent_total',
    help: 'Events sent on event streams, by type (put, delete, outOfShape, synced, stale, live, reset).',
    labelNames: ['type']
  })
  return {
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
      events.inc(type)
    }
  }
}
