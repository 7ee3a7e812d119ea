// The bench is not a test (its goals depend on the machine), but a tiny run of it is, so that it
// cannot rot: every row of the table must print, measured, whatever the figures. The run is handed
// a server of the suite's own by NATS_URL for its large mesh (bench/handed.ts), so that it goes
// through both ways the bench meets a nats-server: started by itself, and handed one.

import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, test } from 'vitest'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import { NatsServer } from '../testkit/nats-server.js'
import { has } from './support/tools.js'
import { fixture } from './support/service.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const SMOKE = ['--import', 'tsx', 'bench/run.ts', '--small', '--keys', '500,1500', '--huge', '6000', '--seconds', '0.3', '--rounds', '1']

/** What the bench takes to be handed `server`: its URL, and the passwords of deploy/accounts.conf's users. */
const handing = (server: NatsServer): NodeJS.ProcessEnv => ({
  ...process.env,
  NATS_URL: server.url,
  NATS_ADMIN_PASSWORD: NatsServer.credentials('admin').pass,
  MESH_PROVISIONER_PASSWORD: NatsServer.credentials('mesh-provisioner').pass
})

/** The service's buckets the server holds, by name. */
async function bucketsOn (server: NatsServer): Promise<string[]> {
  const nc = await server.connect()
  try {
    const streams = await (await nc.jetstreamManager()).streams.names().next()
    return Object.values(BUCKETS).filter((b) => streams.includes(`KV_${b}`))
  } finally {
    await nc.close()
  }
}

describe('npm run bench', () => {
  test('prints every row of the table in a tiny run, its large mesh on the server NATS_URL hands it, whose buckets it deletes at its end', async () => {
    const server = await fixture().server()
    // Load runs of a fraction of a second (autocannon and h2load too: bench/measure.ts loadSampleMs):
    // the smoke proves every row is measured, not what the figures are.
    const { stdout, stderr } = await promisify(execFile)(process.execPath, SMOKE, { cwd: root, env: handing(server), timeout: 190_000 })
    const rows = stdout.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| what '))
    const starts = ['HTTP:', 'CPU a request, HTTP', 'bus:', 'CPU a request, bus', 'one need over HTTP', 'HTTP/2 with TLS', 'HTTP, distinct questions',
      'cold start to ready', 'distinct questions at', 'since:', 'put → visible', 'event streams:', 'memory per open idle event stream', 'event streams on distinct filters',
      'live rows', 'held waits, memory', 'held waits, wake', 'overview after one need changes', 'sweep:', 'during the sweep:', 'during the sweep, a console question',
      'memory after a sweep', 'bytes held per entry', 'RSS with empty buckets',
      'cold start to ready', 'cold start to ready', 'bytes held per entry', 'bytes held per entry', 'distinct questions at', 'overview at']
    expect(rows.map((r) => starts.find((s) => r.startsWith(`| ${s}`)))).toEqual(starts)
    // Without h2load (test/global-setup.ts said so) the HTTP/2 row says why it is not measured.
    const unmeasurable = has('h2load') ? [] : rows.filter((r) => r.startsWith('| HTTP/2 with TLS') && /not measured: h2load is not installed/.test(r))
    for (const row of rows.filter((r) => !unmeasurable.includes(r))) expect(row, row).not.toMatch(/not measured/)
    expect(stderr).toContain(`the 1500-key mesh on the server NATS_URL hands the bench (${server.url}, nats-server `)
    expect(await bucketsOn(server)).toEqual([])
  }, 200_000)

  test('refuses a handed server that holds one of the service\'s buckets, naming it and what would work, and leaves it be', async () => {
    const fx = fixture()
    const server = await fx.server()
    await (await (await fx.admin(server)).jetstream().views.kv(BUCKETS.applied)).put('ace.gitea', '{}')
    const refused = await promisify(execFile)(process.execPath, SMOKE, { cwd: root, env: handing(server), timeout: 30_000 }).then(() => undefined, (err: { code: number, stderr: string }) => err)
    expect(refused?.code).toBe(2)
    expect(refused?.stderr.trim()).toBe(`npm run bench: NATS_URL=${server.url}: the server holds the bucket ${BUCKETS.applied} already; the bench creates, fills and deletes the service's buckets, so it takes a server without them: hand it another server, or delete it (nats kv del ${BUCKETS.applied})`)
    expect(await bucketsOn(server)).toEqual([BUCKETS.applied])
  })
})
