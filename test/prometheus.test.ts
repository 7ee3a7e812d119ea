// A real Prometheus (Debian's package) scrapes a service of its own with deploy/prometheus/alerts.yml
// (each `for:` shortened, evaluated every second): the bucket-missing alert fires while a bucket is
// missing and resolves once it is created, and the not-ready alert fires while NATS is away and
// resolves once it is back. Conditions are polled on Prometheus's HTTP API.

import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test, vi } from 'vitest'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import { PROMETHEUS, prometheusPresent } from './support/prometheus.js'
import { fixture, killAndRestart, type Fixture } from './support/service.js'

/** A loopback port free now (Prometheus cannot be asked to pick one and say it). */
async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** Starts Prometheus scraping `target` (host:port) every second with the shipped rules, `for:` shortened to 1 s. */
async function startPrometheus (fx: Fixture, target: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-prometheus-'))
  fx.defer(async () => await rm(dir, { recursive: true, force: true }))
  const rules = await readFile(new URL('../deploy/prometheus/alerts.yml', import.meta.url), 'utf8')
  await writeFile(join(dir, 'alerts.yml'), rules.replace(/^(\s+)for: \w+$/gm, '$1for: 1s'))
  await writeFile(join(dir, 'prometheus.yml'), [
    'global: { scrape_interval: 1s, evaluation_interval: 1s }',
    'rule_files: [alerts.yml]',
    'scrape_configs:',
    `  - { job_name: mesh-provisioner, static_configs: [{ targets: ['${target}'] }] }`,
    ''
  ].join('\n'))
  const port = await freePort()
  const proc = spawn(PROMETHEUS, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  proc.stderr.on('data', (chunk: Buffer) => { log += chunk.toString() })
  fx.defer(async () => {
    if (proc.exitCode !== null) return
    const exited = new Promise((resolve) => proc.once('exit', resolve))
    proc.kill('SIGTERM')
    await exited
  })
  const url = `http://127.0.0.1:${port}`
  await vi.waitFor(async () => {
    expect(proc.exitCode, log).toBeNull()
    expect((await fetch(`${url}/-/ready`)).status).toBe(200)
  }, { timeout: 15_000, interval: 200 })
  return url
}

interface Alert { labels: Record<string, string>, state: string }

async function alerts (prometheus: string, name: string): Promise<Alert[]> {
  const body = await (await fetch(`${prometheus}/api/v1/alerts`)).json() as { data: { alerts: Alert[] } }
  return body.data.alerts.filter((a) => a.labels['alertname'] === name)
}

/** Each scraped instance's last `mesh_provisioner_ready`, as Prometheus holds it. */
async function ready (prometheus: string): Promise<string[]> {
  const body = await (await fetch(`${prometheus}/api/v1/query?query=mesh_provisioner_ready`)).json() as { data: { result: Array<{ value: [number, string] }> } }
  return body.data.result.map((r) => r.value[1])
}

const wait = { timeout: 20_000, interval: 250 }

describe.skipIf(!prometheusPresent)('a real Prometheus with the shipped rules', () => {
  test('fires BucketMissing while a bucket is missing and NotReady while NATS is away, and resolves each', async () => {
    const fx = fixture()
    const server = await fx.server()
    const nc = await fx.admin(server)
    const js = nc.jetstream()
    await js.views.kv(BUCKETS.applied, { history: 1 })
    await js.views.kv(BUCKETS.collect, { history: 1 })
    const running = await fx.service(server)
    const prometheus = await startPrometheus(fx, new URL(running.url).host)

    await vi.waitFor(async () => {
      expect((await alerts(prometheus, 'MeshProvisionerBucketMissing')).map((a) => [a.labels['bucket'], a.state])).toEqual([[BUCKETS.needs, 'firing']])
    }, wait)
    // A missing bucket does not make the instance not ready. Read from the gauge, not from the
    // NotReady alert: on a busy machine a scrape can outlast its 1 s interval, and `up == 0` then
    // sets that alert pending for a moment.
    expect(await ready(prometheus)).toEqual(['1'])
    await js.views.kv(BUCKETS.needs, { history: 1 })
    await vi.waitFor(async () => { expect(await alerts(prometheus, 'MeshProvisionerBucketMissing')).toEqual([]) }, wait)

    await killAndRestart(server, {
      reconnecting: [running.nc],
      whileDown: async () => {
        await vi.waitFor(async () => { expect((await alerts(prometheus, 'MeshProvisionerNotReady')).map((a) => a.state)).toEqual(['firing']) }, wait)
      }
    })
    await vi.waitFor(async () => { expect(await alerts(prometheus, 'MeshProvisionerNotReady')).toEqual([]) }, wait)
  }, 90_000)
})
