// The operator's alerts (deploy/prometheus/alerts.yml) under Debian's promtool: the rules are
// valid, each alert fires on the series its test gives and not before (alerts.test.yml), each
// summary names the remedy and links a section of docs/operations.md that exists, and a live
// /metrics passes `promtool check metrics`.

import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, test, vi } from 'vitest'
import { parse } from 'yaml'
import { connectionBound } from '../src/http/holds.js'
import { anchorsOf } from './support/markdown.js'
import { runMain } from './support/process.js'
import { prometheusPresent, promtool } from './support/prometheus.js'
import { startSeeded, suiteFixture, type Seeded } from './support/service.js'

interface Rule { alert: string, expr: string, for?: string, annotations: Record<string, string> }
const rulesText = await readFile(new URL('../deploy/prometheus/alerts.yml', import.meta.url), 'utf8')
const rules = (parse(rulesText) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((g) => g.rules)
const RUNBOOK = 'docs/operations.md'
const runbookSections = anchorsOf(await readFile(new URL(`../${RUNBOOK}`, import.meta.url), 'utf8'))

describe('the alert rules', () => {
  test('are the alerts an operator needs, each with a summary naming the remedy and a section of its own in the runbook', () => {
    expect(rules.map((r) => r.alert)).toEqual([
      'MeshProvisionerNotReady', 'MeshProvisionerBucketMissing', 'MeshProvisionerRegistryWriterFailing', 'MeshProvisionerNatsDisconnected',
      'MeshProvisionerVerbDown', 'MeshProvisionerEventStreamsNearLimit', 'MeshProvisionerServerErrors', 'MeshProvisionerRefusals', 'MeshProvisionerNodeSilent',
      'MeshProvisionerModuleWaiting', 'MeshProvisionerNeedUnanswered'
    ])
    const links = rules.map((r) => r.annotations['runbook_url'] ?? '')
    expect(new Set(links).size, 'one section an alert').toBe(rules.length)
    for (const [i, rule] of rules.entries()) {
      const link = links[i] as string
      expect(link, rule.alert).toMatch(new RegExp(`^${RUNBOOK.replace('.', '\\.')}#[a-z0-9-]+$`))
      // The remedy after the colon, then the section: what a page (which may show only the summary) needs.
      expect(rule.annotations['summary'], rule.alert).toMatch(/: \w/)
      expect(rule.annotations['summary'], rule.alert).toMatch(new RegExp(`; see ${link.replace('.', '\\.')}$`))
      expect(runbookSections, `${RUNBOOK} section for ${rule.alert}`).toContain(link.split('#')[1])
      expect(rule.annotations['description'], rule.alert).toContain(link)
    }
  })
})

describe.skipIf(!prometheusPresent)('the alert rules under promtool', () => {
  test('pass `promtool check rules`', async () => {
    const run = await promtool(['check', 'rules', 'deploy/prometheus/alerts.yml'])
    expect(run.stderr).toBe('')
    expect(run).toMatchObject({ code: 0 })
    expect(run.stdout).toContain(`SUCCESS: ${rules.length} rules found`)
  })

  test('pass `promtool test rules`, which has a test for every alert', async () => {
    const tests = parse(await readFile(new URL('../deploy/prometheus/alerts.test.yml', import.meta.url), 'utf8')) as { tests: Array<{ alert_rule_test: Array<{ alertname: string }> }> }
    expect(new Set(tests.tests.flatMap((t) => t.alert_rule_test.map((a) => a.alertname)))).toEqual(new Set(rules.map((r) => r.alert)))
    const run = await promtool(['test', 'rules', 'deploy/prometheus/alerts.test.yml'])
    expect(`${run.stdout}${run.stderr}`).toContain('SUCCESS')
    expect(run.code, run.stdout).toBe(0)
  })
})

describe.skipIf(!prometheusPresent)('compose\'s monitoring profile', () => {
  test('runs a Prometheus config that passes `promtool check config`, scraping the service with the metrics token file', async () => {
    const compose = parse(await readFile(new URL('../compose.yaml', import.meta.url), 'utf8')) as { services: Record<string, { profiles?: string[], secrets?: string[], volumes?: string[] }> }
    expect(compose.services['prometheus']).toMatchObject({ profiles: ['monitoring'], secrets: ['metrics_token'], volumes: expect.arrayContaining(['./deploy/prometheus:/etc/prometheus:ro']) })
    // The secret's path exists only in the container: the same config, with a token file of the test's.
    const dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-promconfig-'))
    try {
      const config = await readFile(new URL('../deploy/prometheus/prometheus.yml', import.meta.url), 'utf8')
      expect(config).toContain('credentials_file: /run/secrets/metrics_token')
      await writeFile(join(dir, 'token'), 'mpt_example\n')
      await writeFile(join(dir, 'prometheus.yml'), config.replace('/run/secrets/metrics_token', join(dir, 'token')))
      await copyFile(new URL('../deploy/prometheus/alerts.yml', import.meta.url), join(dir, 'alerts.yml'))
      const run = await promtool(['check', 'config', join(dir, 'prometheus.yml')])
      expect(`${run.stdout}${run.stderr}`).toContain(`SUCCESS: ${rules.length} rules found`)
      expect(run.code).toBe(0)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('a live /metrics', () => {
  const fx = suiteFixture()
  let seeded: Seeded
  beforeAll(async () => { seeded = await startSeeded(fx) }, 30_000)

  test.skipIf(!prometheusPresent)('passes `promtool check metrics`, node last writes included', async () => {
    const text = await (await fetch(`${seeded.running.url}/metrics`)).text()
    expect(text).toMatch(/^mesh_provisioner_node_last_write_timestamp_seconds\{node="ace"\} \d+(\.\d+)?$/m)
    expect(text).toMatch(/^mesh_provisioner_ready 1$/m)
    const run = await promtool(['check', 'metrics'], text)
    expect(`${run.stdout}${run.stderr}`).toBe('')
    expect(run.code).toBe(0)
  })

  test('follows the writes: a node appears with its write, and goes with its last key', async () => {
    const kv = await seeded.nc.jetstream().views.kv('mesh-provisioner_applied')
    const series = async (): Promise<string | undefined> => /^mesh_provisioner_node_last_write_timestamp_seconds\{node="zed"\} (\S+)$/m.exec(await (await fetch(`${seeded.running.url}/metrics`)).text())?.[1]
    expect(await series()).toBeUndefined()
    const before = Date.now()
    await kv.put('zed.gitea', '{}')
    await vi.waitFor(async () => { expect(Number(await series()) * 1000).toBeGreaterThanOrEqual(before - 1000) }, { timeout: 5000, interval: 50 })
    await kv.delete('zed.gitea')
    await vi.waitFor(async () => { expect(await series()).toBeUndefined() }, { timeout: 5000, interval: 50 })
  })

  test('follows the modules per state, the earliest waitingSince and the unanswered needs', async () => {
    const kv = await seeded.nc.jetstream().views.kv('mesh-provisioner_needs')
    const read = async (): Promise<Record<string, number | undefined>> => {
      const text = await (await fetch(`${seeded.running.url}/metrics`)).text()
      const value = (re: RegExp): number | undefined => { const m = re.exec(text); return m === null ? undefined : Number(m[1]) }
      return {
        unapplied: value(/^mesh_provisioner_modules\{state="unapplied"\} (\S+)$/m),
        since: value(/^mesh_provisioner_waiting_since_timestamp_seconds (\S+)$/m),
        unanswered: value(/^mesh_provisioner_needs_unanswered (\S+)$/m)
      }
    }
    const before = await read()
    expect(before.unapplied).toBeGreaterThanOrEqual(0)
    expect(before.unanswered).toBeGreaterThanOrEqual(0)
    await kv.put('zed.web.no-such-kind.x', '{}')
    await vi.waitFor(async () => expect(await read()).toMatchObject({ unapplied: (before.unapplied as number) + 1, unanswered: (before.unanswered as number) + 1 }), { timeout: 5000, interval: 50 })
    // Something waits now: the earliest waitingSince is at most this write's.
    expect((await read()).since).toBeLessThanOrEqual(Date.now() / 1000)
    await kv.delete('zed.web.no-such-kind.x')
    await vi.waitFor(async () => expect(await read()).toEqual(before), { timeout: 5000, interval: 50 })
  })

  test('says the event streams the instance holds at most: the bound in force when the open file limit lowers HTTP_MAX_STREAMS', async () => {
    // 600 files hold 300 streams and 100 waits with their headroom only in proportion: 210 streams (src/http/holds.ts).
    const { maxStreams } = connectionBound(300, 100, 600)
    expect(maxStreams).toBe(210)
    const { proc, out } = runMain({ ...seeded.server.serviceEnv(), HTTP_MAX_STREAMS: '300', HTTP_MAX_WAITS: '100', LOG_LEVEL: 'info' }, { fileLimit: 600 })
    try {
      await expect.poll(out, { timeout: 15_000 }).toContain('mesh-provisioner serving')
      expect(out()).toContain(`holding ${maxStreams} streams`)
      const url = /"url":"(http:[^"]+)"/.exec(out())?.[1] as string
      // The near-limit alert divides by this gauge: HTTP_MAX_STREAMS here would never let it fire.
      expect(await (await fetch(`${url}/metrics`)).text()).toMatch(new RegExp(`^mesh_provisioner_event_streams_max ${maxStreams}$`, 'm'))
    } finally {
      proc.kill('SIGKILL')
    }
  })

  test('leaves the node series out with METRICS_NODE_LAST_WRITE=false', async () => {
    const quiet = await fx.service(seeded.server, { METRICS_NODE_LAST_WRITE: 'false' })
    const text = await (await fetch(`${quiet.url}/metrics`)).text()
    expect(text).toMatch(/^mesh_provisioner_view_keys\{bucket="mesh-provisioner_needs"\} [1-9]/m)
    expect(text).not.toContain('mesh_provisioner_node_last_write')
  })
})
