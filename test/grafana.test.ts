// The Grafana dashboard (deploy/grafana/mesh-provisioner.json) reads only what the service exports:
// every metric a panel's query names is one a live /metrics declares, and it shows what an operator
// looks at (requests, latency, views, registry runs, streams, refusals, NATS, silent nodes). It is
// in Grafana's export format, so that Import asks for the Prometheus to read (its one input).

import { readFile } from 'node:fs/promises'
import { beforeAll, describe, expect, test } from 'vitest'
import { startSeeded, suiteFixture, type Seeded } from './support/service.js'

interface Panel { type: string, title: string, datasource?: { uid: string }, targets?: Array<{ expr: string }> }
const text = await readFile(new URL('../deploy/grafana/mesh-provisioner.json', import.meta.url), 'utf8')
const dashboard = JSON.parse(text) as { panels: Panel[], uid: string, __inputs: unknown[], __requires: Array<{ type: string, id: string }> }
const panels = dashboard.panels.filter((p) => p.type !== 'row')
/** The import input every panel reads through (Import asks for it: the data source to read). */
const DATASOURCE = '$' + '{DS_PROMETHEUS}'

/** The metric names a query names: the exported families' prefixes, label matchers and strings left out. */
function metricsOf (expr: string): string[] {
  const bare = expr.replace(/\{[^}]*\}/g, '').replace(/"[^"]*"/g, '')
  return [...bare.matchAll(/\b(?:mesh_provisioner|nodejs|process)_[a-z0-9_]+\b/g)].map((m) => m[0])
}

/** Every sample name /metrics declares: each family, and a histogram's series. */
function exported (text: string): Set<string> {
  const names = new Set<string>()
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name as string)
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name as string}${suffix}`)
  }
  return names
}

describe('the Grafana dashboard', () => {
  const fx = suiteFixture()
  let seeded: Seeded
  beforeAll(async () => { seeded = await startSeeded(fx) }, 30_000)

  test('queries only metrics a live /metrics exports, through the chosen data source', async () => {
    const names = exported(await (await fetch(`${seeded.running.url}/metrics`)).text())
    const unknown: string[] = []
    for (const panel of panels) {
      expect(panel.datasource?.uid, panel.title).toBe(DATASOURCE)
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0)
      for (const { expr } of panel.targets ?? []) {
        const used = metricsOf(expr)
        expect(used, `${panel.title}: ${expr}`).not.toEqual([])
        for (const name of used) if (!names.has(name)) unknown.push(`${panel.title}: ${name}`)
      }
    }
    expect(unknown).toEqual([])
  })

  test('imports with one input, the Prometheus data source, which every query and variable reads through', () => {
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' })])
    const uids = [...text.matchAll(/"uid": "(\$\{[^}]*\})"/g)].map((m) => m[1])
    expect(uids.length).toBeGreaterThan(panels.length)
    expect(new Set(uids)).toEqual(new Set([DATASOURCE]))
    // What the import needs is named, each kind of panel included.
    const required = dashboard.__requires.map((r) => `${r.type}:${r.id}`)
    expect(required).toEqual(expect.arrayContaining(['grafana:grafana', 'datasource:prometheus', ...new Set(panels.map((p) => `panel:${p.type}`))]))
  })

  test('shows requests, latency, views, registry runs, streams, refusals, NATS, silent nodes and the modules per state', () => {
    const used = new Set(panels.flatMap((p) => (p.targets ?? []).flatMap((t) => metricsOf(t.expr))))
    for (const name of [
      'mesh_provisioner_requests_total', 'mesh_provisioner_request_duration_seconds_bucket', 'mesh_provisioner_view_keys', 'mesh_provisioner_view_stale',
      'mesh_provisioner_registry_runs_total', 'mesh_provisioner_event_streams', 'mesh_provisioner_http_refused_total', 'mesh_provisioner_nats_connected',
      'mesh_provisioner_node_last_write_timestamp_seconds', 'mesh_provisioner_modules'
    ]) expect(used, name).toContain(name)
  })
})
