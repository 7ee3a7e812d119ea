// The gauges the alerts read, fed by fake ports: each says what its source says at the scrape,
// node series come and go with the nodes, and prom-client's misnamed defaults are left out.

import { describe, expect, test } from 'vitest'
import type { Views } from './domain/follow/views.js'
import type { ViewStatus } from './domain/wire/schemas.js'
import { createMetrics } from './metrics.js'

const status = (bucket: string, state: ViewStatus['state'], stale = false): ViewStatus => ({ bucket, state, stale, revision: 7, keys: 3, outOfShape: 0 })
const views = (connected: boolean, ...all: ViewStatus[]) => () => ({ connected: () => connected, status: () => Object.fromEntries(all.map((s) => [s.bucket, s])) }) as unknown as Views

/** The samples of `name` in the exposition, as `labels value` lines. */
async function samples (metrics: ReturnType<typeof createMetrics>, name: string): Promise<string[]> {
  const text = await metrics.registry.metrics()
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `)).map((l) => l.slice(name.length).trim())
}

describe('the gauges read at scrape time', () => {
  test('readiness, the verb, the stream limit and each view\'s state', async () => {
    let ready = false
    const metrics = createMetrics(views(true, status('b1', 'absent'), status('b2', 'live', true)), false, { ready: () => ready, verbServing: () => true, maxStreams: 250 })
    expect(await samples(metrics, 'mesh_provisioner_ready')).toEqual(['0'])
    ready = true
    expect(await samples(metrics, 'mesh_provisioner_ready')).toEqual(['1'])
    expect(await samples(metrics, 'mesh_provisioner_verb_serving')).toEqual(['1'])
    expect(await samples(metrics, 'mesh_provisioner_event_streams_max')).toEqual(['250'])
    expect(await samples(metrics, 'mesh_provisioner_view_state')).toEqual([
      '{bucket="b1",state="starting"} 0', '{bucket="b1",state="absent"} 1', '{bucket="b1",state="loading"} 0', '{bucket="b1",state="live"} 0',
      '{bucket="b2",state="starting"} 0', '{bucket="b2",state="absent"} 0', '{bucket="b2",state="loading"} 0', '{bucket="b2",state="live"} 1'
    ])
    expect(await samples(metrics, 'mesh_provisioner_view_stale')).toEqual(['{bucket="b1"} 0', '{bucket="b2"} 1'])
  })

  test('a node\'s last write in seconds, gone with the node; none without the port', async () => {
    let nodes: Array<[string, number]> = [['ace', 1_764_400_000_500], ['g14', 1_764_400_100_000]]
    const metrics = createMetrics(views(true), false, { lastWrites: () => nodes })
    expect(await samples(metrics, 'mesh_provisioner_node_last_write_timestamp_seconds')).toEqual(['{node="ace"} 1764400000.5', '{node="g14"} 1764400100'])
    nodes = [['g14', 1_764_400_200_000]]
    expect(await samples(metrics, 'mesh_provisioner_node_last_write_timestamp_seconds')).toEqual(['{node="g14"} 1764400200'])
    expect(await createMetrics(views(true), false).registry.getSingleMetric('mesh_provisioner_node_last_write_timestamp_seconds')).toBeUndefined()
  })

  test('the registry writer\'s last run', async () => {
    const metrics = createMetrics(views(true), false)
    const run = { at: '2026-11-29T09:40:00.000Z', durationMs: 3, wrote: ['secret'], left: [], deleted: [] }
    metrics.registryRun({ ...run, ok: false, error: 'no grant' })
    expect(await samples(metrics, 'mesh_provisioner_registry_last_run_ok')).toEqual(['0'])
    metrics.registryRun({ ...run, ok: true })
    expect(await samples(metrics, 'mesh_provisioner_registry_last_run_ok')).toEqual(['1'])
    expect(await samples(metrics, 'mesh_provisioner_registry_last_run_timestamp_seconds')).toEqual(['1795945200'])
  })

  test('prom-client\'s gauges named like counters are left out, their labelled twins kept', async () => {
    const text = await createMetrics(views(true), true).registry.metrics()
    expect(text).not.toMatch(/^nodejs_active_(handles|requests|resources)_total/m)
    expect(text).toMatch(/^# TYPE nodejs_active_handles gauge$/m)
  })
})
