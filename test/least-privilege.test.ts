// The shipped NATS grants (deploy/accounts.conf, included by deploy/nats-server.conf) hold: the
// shipped server configuration is valid, a node client writes only its own node's keys, the
// service's user can write nothing but its registry, and a watch big enough to need flow-control
// replies loads under the service's user without a permission violation.

import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { beforeAll, describe, expect, test } from 'vitest'
import { ErrorCode, type NatsConnection, type NatsError } from 'nats'
import { natsServerBin, type NatsServer } from '../testkit/nats-server.js'
import { suiteFixture, untilReady, untilWritten } from './support/service.js'
import { createClientBuckets } from '../testkit/sample-mesh.js'
import { writeStored } from '../testkit/stored-writes.js'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import { INBOX_PREFIX } from '../src/nats.js'
import type { Running } from '../src/service.js'
import { requestVerb } from './support/verb.js'

const fx = suiteFixture()
let server: NatsServer
let admin: NatsConnection

beforeAll(async () => {
  server = await fx.server()
  admin = await fx.admin(server)
  await createClientBuckets(admin)
})

async function refused (what: Promise<unknown>): Promise<void> {
  const err = await what.then(() => undefined, (e: unknown) => e as NatsError)
  expect(err, 'the write was accepted').toBeDefined()
  expect(err?.code).toBe(ErrorCode.PermissionsViolation)
  expect(err?.message).toMatch(/Permissions Violation for Publish/)
}

describe('a node client (node-ace)', () => {
  let ace: NatsConnection
  beforeAll(async () => {
    ace = await server.connectAs('node-ace', { inboxPrefix: '_INBOX_ace' })
    fx.defer(async () => await ace.close())
  })

  test('writes, reads back and deletes its own node\'s keys in the three client buckets', async () => {
    const js = ace.jetstream()
    for (const [bucket, key] of [[BUCKETS.needs, 'ace.gitea.secret.db'], [BUCKETS.applied, 'ace.gitea'], [BUCKETS.collect, 'ace.shell.gitea']] as const) {
      const kv = await js.views.kv(bucket, { bindOnly: true, allow_direct: true })
      const revision = await kv.put(key, '{"mine":true}')
      expect((await kv.get(key))?.revision).toBe(revision)
      await kv.delete(key)
    }
  })

  test('is refused when it writes another node\'s key, in every client bucket and the registry', async () => {
    const js = ace.jetstream()
    await refused((async () => await (await js.views.kv(BUCKETS.needs, { bindOnly: true })).put('g14.gitea.secret.db', '{}'))())
    await refused((async () => await (await js.views.kv(BUCKETS.applied, { bindOnly: true })).put('g14.gitea', '{}'))())
    await refused((async () => await (await js.views.kv(BUCKETS.collect, { bindOnly: true })).put('g14.shell.gitea', '{}'))())
    await refused(js.publish(`$KV.${BUCKETS.registry}.secret`, '{}'))
    const stored = await (await admin.jetstream().views.kv(BUCKETS.needs)).get('g14.gitea.secret.db')
    expect(stored).toBeNull()
  })

  test('may not read another node\'s needs', async () => {
    const kv = await ace.jetstream().views.kv(BUCKETS.needs, { bindOnly: true, allow_direct: true })
    await (await admin.jetstream().views.kv(BUCKETS.needs)).put('g14.gitea.secret.db', '{}')
    await refused(kv.get('g14.gitea.secret.db'))
  })
})

describe('the service\'s own user (mesh-provisioner)', () => {
  let svc: NatsConnection
  beforeAll(async () => {
    const env = server.serviceEnv()
    // Signed in as the service signs in: its user, its inbox prefix.
    svc = await server.connect({ user: env['NATS_USER'], pass: env['NATS_PASSWORD'], inboxPrefix: INBOX_PREFIX })
    fx.defer(async () => await svc.close())
  })

  test('is refused if it ever tried to write a bucket other than its registry', async () => {
    const js = svc.jetstream()
    for (const bucket of [BUCKETS.needs, BUCKETS.applied, BUCKETS.collect]) {
      await refused((async () => await (await js.views.kv(bucket, { bindOnly: true })).put('ace.gitea.secret.db', '{}'))())
    }
    await refused(js.views.kv('mesh-controller_config'))
    await refused((async () => await (await svc.jetstreamManager()).streams.delete(`KV_${BUCKETS.needs}`))())
  })

  test('may answer the flow control of its four watches, and no other stream\'s', async () => {
    // A watch without these stalls silently once the server asks for flow control (after ~2 MB);
    // when it asks depends on timing, so the grants are checked here directly.
    const logFrom = server.log.length
    for (const bucket of Object.values(BUCKETS)) svc.publish(`$JS.FC.KV_${bucket}.probe.1`)
    svc.publish('$JS.FC.KV_mesh-controller_config.probe.1')
    await svc.flush()
    await expect.poll(() => server.log.slice(logFrom), { timeout: 5000 }).toContain('$JS.FC.KV_mesh-controller_config.probe.1')
    expect(server.log.slice(logFrom).match(/Publish Violation.*\$JS\.FC\..*/g)).toEqual([expect.stringContaining('"$JS.FC.KV_mesh-controller_config.probe.1"')])
  })

  test('writes its registry bucket', async () => {
    const kv = await svc.jetstream().views.kv(BUCKETS.registry, { history: 1 })
    await kv.put('probe', '{}')
    await kv.delete('probe')
  })
})

describe('the service under its user', () => {
  let running: Running

  test('loads a 50,000-key collect snapshot (it needs flow-control replies) and follows 6 MB of updates, with no permission violation', async () => {
    const kv = await admin.jetstream().views.kv(BUCKETS.collect)
    const small = JSON.stringify({ lines: ['y'.repeat(100)] })
    const puts = Array.from({ length: 50_000 }, (_, j) => ({ subject: `$KV.${BUCKETS.collect}.n${Math.floor(j / 1000)}.shell.c${j % 1000}`, data: small }))
    await writeStored(admin, puts, [`KV_${BUCKETS.collect}`])
    const logFrom = server.log.length
    running = await fx.service(server)
    await untilReady(running, 60_000)
    expect(running.views.status().collect).toMatchObject({ state: 'live', keys: 50_000 })
    const big = JSON.stringify({ lines: 'x'.repeat(50_000) })
    for (let i = 0; i < 120; i++) await kv.put(`big${i}.shell.gitea`, big)
    await expect.poll(() => running.views.status().collect.keys, { timeout: 30_000 }).toBe(50_120)
    const reply = await requestVerb(admin, JSON.stringify({ what: 'collect', node: 'big0' }), { timeout: 10_000 })
    expect(reply.headers?.get('Nats-Service-Error-Code') ?? '').toBe('')
    expect(reply.json()).toMatchObject({ total: 1, stale: false, entries: [{ key: 'big0.shell.gitea' }] })
    await untilWritten(running)
    expect(server.log.slice(logFrom)).not.toMatch(/Violation/)
  }, 120_000)

  test('answers discovery ($SRV.PING, INFO, STATS) and a node client\'s verb request on its own inbox prefix', async () => {
    const client = admin.services.client()
    for (const verb of ['ping', 'info', 'stats'] as const) {
      const replies = []
      for await (const r of await client[verb]('mesh-provisioner')) replies.push(r)
      expect(replies, verb).toEqual([expect.objectContaining({ name: 'mesh-provisioner' })])
    }
    const ace = await server.connectAs('node-ace', { inboxPrefix: '_INBOX_ace' })
    fx.defer(async () => await ace.close())
    const reply = await requestVerb(ace, '{"what":"registry","kind":"secret"}', { timeout: 10_000 })
    expect(reply.headers?.get('Nats-Service-Error-Code') ?? '').toBe('')
    expect(reply.json()).toMatchObject({ what: 'registry', entries: [{ kind: 'secret' }] })
  })
})

test('the shipped server configuration, with its included accounts, is one nats-server accepts', async () => {
  const env = { ...process.env, NATS_ADMIN_PASSWORD: 'pa', MESH_PROVISIONER_PASSWORD: 'pb', NODE_ACE_PASSWORD: 'pc' }
  const { stdout, stderr } = await promisify(execFile)(natsServerBin(), ['-c', 'nats-server.conf', '-t'], { cwd: new URL('../deploy/', import.meta.url), env })
  expect(`${stdout}${stderr}`).toMatch(/configuration file nats-server.conf is valid/)
})
