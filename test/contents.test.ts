// Bucket contents a client may write, while the service runs: values that are not JSON or not
// text, values near the max payload, delete and purge markers, and buckets (a client's and the
// registry) deleted and re-created. Every answer stays correct and says what it could not read.

import type { KV, NatsConnection } from 'nats'
import { beforeAll, describe, expect, test, vi } from 'vitest'
import { createClientBuckets } from '../testkit/sample-mesh.js'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import type { Running } from '../src/service.js'
import { suiteFixture, untilReady, untilWritten } from './support/service.js'
import { requestVerb } from './support/verb.js'

const fx = suiteFixture()
let admin: NatsConnection
let running: Running
let needs: KV

beforeAll(async () => {
  const server = await fx.server()
  admin = await fx.admin(server)
  needs = (await createClientBuckets(admin)).needs
  running = await fx.service(server, { REGISTRY_INTERVAL: '1s' })
  await untilReady(running)
})

interface Reply { code: number, body: any, bytes: number }

async function ask (request: unknown): Promise<Reply> {
  const msg = await requestVerb(admin, JSON.stringify(request))
  return { code: Number(msg.headers?.get('Nats-Service-Error-Code') ?? 200), body: msg.json(), bytes: msg.data.length }
}

/** Waits until the service's needs view has caught up with the bucket's last write. */
async function caughtUp (kv: KV = needs): Promise<void> {
  const last = (await kv.status()).streamInfo.state.last_seq
  await expect.poll(() => running.views.status().needs.revision, { timeout: 10_000 }).toBeGreaterThanOrEqual(last)
}

describe('values', () => {
  test('not JSON, empty, or not UTF-8: answered with raw or rawBase64 and the problem', async () => {
    await needs.put('ace.mail.secret.text', 'plain text')
    await needs.put('ace.mail.secret.empty', '')
    await needs.put('ace.mail.secret.bytes', new Uint8Array([0xff, 0x00, 0xc3]))
    await caughtUp()
    const { code, body } = await ask({ what: 'needs', node: 'ace', module: 'mail' })
    expect(code).toBe(200)
    const byKey = Object.fromEntries(body.entries.map((e: { key: string }) => [e.key, e]))
    expect(byKey['ace.mail.secret.text']).toMatchObject({ raw: 'plain text', problem: expect.stringMatching(/not JSON/) })
    expect(byKey['ace.mail.secret.text']).not.toHaveProperty('value')
    expect(byKey['ace.mail.secret.empty']).toMatchObject({ raw: '', problem: expect.stringMatching(/empty/) })
    expect(byKey['ace.mail.secret.bytes']).toMatchObject({ rawBase64: Buffer.from([0xff, 0x00, 0xc3]).toString('base64'), problem: expect.stringMatching(/not UTF-8/) })
  })

  test('values near the max payload: every answer fits the connection\'s max payload and says what it cut', async () => {
    const max = admin.info?.max_payload as number
    const big = JSON.stringify({ blob: 'y'.repeat(max - 4096) })
    await needs.put('g14.huge.config.a', big)
    await needs.put('g14.huge.config.b', big)
    await needs.put('g14.huge.config.c', '{"small":true}')
    await caughtUp()
    const first = await ask({ what: 'needs', node: 'g14', module: 'huge' })
    expect(first.code).toBe(200)
    expect(first.bytes).toBeLessThanOrEqual(max)
    expect(first.body).toMatchObject({ total: 3, cut: { reason: 'payload' }, next: expect.any(String) })
    // Paging with `next` reaches every key, each answer within the max payload.
    const keys: string[] = first.body.entries.map((e: { key: string }) => e.key)
    let page = first
    for (let i = 0; page.body.next !== undefined && i < 10; i++) {
      page = await ask({ what: 'needs', node: 'g14', module: 'huge', after: page.body.next })
      expect(page.code).toBe(200)
      expect(page.bytes).toBeLessThanOrEqual(max)
      keys.push(...page.body.entries.map((e: { key: string }) => e.key))
    }
    expect(keys).toEqual(['g14.huge.config.a', 'g14.huge.config.b', 'g14.huge.config.c'])
  })
})

describe('delete and purge markers', () => {
  test('a deleted or purged key is no entry, nor an out-of-shape one', async () => {
    await needs.put('shanks.gitea.secret.gone', '{}')
    await needs.put('shanks.gitea.secret.purged', '{}')
    await needs.put('shanks.gitea.secret.kept', '{}')
    await needs.put('shanks.gitea', '{"out":"of shape"}')
    await caughtUp()
    expect((await ask({ what: 'needs', node: 'shanks' })).body).toMatchObject({ total: 3, outOfShape: [{ key: 'shanks.gitea' }] })
    await needs.delete('shanks.gitea.secret.gone')
    await needs.purge('shanks.gitea.secret.purged')
    await needs.delete('shanks.gitea')
    await caughtUp()
    const { body } = await ask({ what: 'needs', node: 'shanks' })
    expect(body.entries.map((e: { key: string }) => e.key)).toEqual(['shanks.gitea.secret.kept'])
    expect(body).toMatchObject({ total: 1, outOfShape: [] })
  })
})

describe('buckets deleted and re-created while the service runs', () => {
  test('a client bucket: said stale at first (a cluster electing a leader says "not found" too), 503 naming it once it stays gone, then the new contents only', async () => {
    const before = await ask({ what: 'needs' })
    const jsm = await admin.jetstreamManager()
    const deleted = Date.now()
    await jsm.streams.delete(`KV_${BUCKETS.needs}`)
    const doubted = await vi.waitFor(async () => {
      const r = await ask({ what: 'needs' })
      expect(r.code !== 200 || r.body.stale, 'the deleted bucket noticed').toBe(true)
      return r
    }, { timeout: 10_000, interval: 50 })
    expect(doubted.code).toBe(200)
    expect(doubted.body).toEqual({ ...before.body, stale: true })
    const gone = await vi.waitFor(async () => {
      const r = await ask({ what: 'needs' })
      expect(r.code, '503 for the deleted bucket').toBe(503)
      return r
    }, { timeout: 10_000, interval: 50 })
    // A lower bound only: a busy machine makes it later, never sooner.
    expect(Date.now() - deleted).toBeGreaterThanOrEqual(3000)
    expect(gone.body.error).toEqual({ code: 'BUCKET_MISSING', message: expect.stringContaining(`bucket ${BUCKETS.needs} does not exist`) })
    needs = await admin.jetstream().views.kv(BUCKETS.needs, { history: 1 })
    await needs.put('novox.grafana.port.3000', '{"wanted":3000}')
    const back = await vi.waitFor(async () => {
      const r = await ask({ what: 'needs' })
      expect([r.code, r.body.total], 'the re-created bucket served').toEqual([200, 1])
      return r
    }, { timeout: 10_000, interval: 50 })
    expect(back.body.entries.map((e: { key: string }) => e.key)).toEqual(['novox.grafana.port.3000'])
    expect(back.body.outOfShape).toEqual([])
  })

  test('a bucket re-created at once: never refused while it reloads, then the new contents only', async () => {
    await needs.put('novox.grafana.port.3000', '{"wanted":3000}')
    await caughtUp()
    const seen: string[] = []
    const state = { going: true }
    const asking = (async () => {
      while (state.going) {
        const r = await ask({ what: 'needs' })
        seen.push(r.code === 200 ? `${r.body.entries.map((e: { key: string }) => e.key).join(',')} stale=${r.body.stale}` : `${r.code} ${r.body.error.message}`)
      }
    })()
    const jsm = await admin.jetstreamManager()
    await jsm.streams.delete(`KV_${BUCKETS.needs}`)
    needs = await admin.jetstream().views.kv(BUCKETS.needs, { history: 1 })
    await needs.put('novox.grafana.port.3001', '{"wanted":3001}')
    await expect.poll(() => seen.at(-1), { timeout: 10_000 }).toBe('novox.grafana.port.3001 stale=false')
    state.going = false
    await asking
    // No entries at all is an answer too: the new bucket read before the put reached it.
    expect(seen.filter((s) => !/^(novox\.grafana\.port\.300[01])? stale=(true|false)$/.test(s))).toEqual([])
  })

  test('the registry bucket: the writer creates it again, writes every kind, and the answers follow the new one', async () => {
    await untilWritten(running)
    const jsm = await admin.jetstreamManager()
    const before = await jsm.streams.info(`KV_${BUCKETS.registry}`)
    await jsm.streams.delete(`KV_${BUCKETS.registry}`)
    const after = await vi.waitFor(async () => {
      const info = await jsm.streams.info(`KV_${BUCKETS.registry}`)
      expect(info.created, 'the registry bucket created again').not.toBe(before.created)
      expect(info.state.messages, 'and written again').toBe(13)
      return info
    }, { timeout: 20_000, interval: 100 })
    const back = await vi.waitFor(async () => {
      const r = await ask({ what: 'registry' })
      expect([r.code, r.body.revision], 'answers from the new registry bucket').toEqual([200, after.state.last_seq])
      return r
    }, { timeout: 20_000, interval: 50 })
    expect(back.body.total).toBe(13)
  })
})
