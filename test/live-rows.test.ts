// The live rows of the mesh at a glance against a real nats-server: GET /v1/nodes/events and
// GET /v1/modules/events send the rows the answers give, then a put when a kept row changes and a
// delete when one leaves the filter (its state left, its keys gone), only for the rows a write
// touches; resume by Last-Event-ID with what changed since; reset for an id that cannot be served
// and when a bucket is created again.

import type { KV, NatsConnection } from 'nats'
import { beforeAll, describe, expect, test, vi } from 'vitest'
import type { Running } from '../src/service.js'
import { BUCKETS, type What } from '../src/domain/wire/key-shapes.js'
import { createClientBuckets } from '../testkit/sample-mesh.js'
import { request } from './support/http.js'
import { fixture, suiteFixture, untilReady, untilWritten } from './support/service.js'
import { isSynced, openStream, untilEvent, type SseEvent, type SseStream } from './support/sse.js'
import { seenWrites } from './support/seen-writes.js'

const fx = suiteFixture()
let nc: NatsConnection
let kv: Record<Exclude<What, 'registry'>, KV>
let running: Running

/** Writes that return once the service's view has read them. */
const { put, remove } = seenWrites(() => kv, () => running)

async function rows (path: string): Promise<unknown[]> {
  const res = await request(`${running.url}${path}`)
  const doc = await res.body.json() as { nodes?: unknown[], modules?: unknown[] }
  return doc.nodes ?? doc.modules ?? []
}

const data = (e: SseEvent | undefined): any => JSON.parse(e?.data ?? 'null')
const follow = async (path: string, headers: Record<string, string> = {}): Promise<SseStream> => await openStream(`${running.url}${path}`, headers)
/** The events after index `i`, as [event, node(.module)] pairs. */
const named = (stream: SseStream, from: number, to = stream.events.length): Array<[string, string]> =>
  stream.events.slice(from, to).filter((e) => e.event === 'put' || e.event === 'delete').map((e) => [e.event, [data(e).node, data(e).module].filter((x) => x !== undefined).join('.')])

/** The rows a client holds after applying every event so far, in answer order. */
function held (stream: SseStream): unknown[] {
  const kept = new Map<string, unknown>()
  for (const e of stream.events) {
    const row = data(e)
    const key = [row?.node, row?.module].filter((x) => x !== undefined).join('.')
    if (e.event === 'reset') kept.clear()
    if (e.event === 'put') kept.set(key, row)
    if (e.event === 'delete') kept.delete(key)
  }
  return [...kept.entries()].sort(([a], [b]) => a < b ? -1 : 1).map(([, row]) => row)
}

beforeAll(async () => {
  const server = await fx.server()
  nc = await fx.admin(server)
  kv = await createClientBuckets(nc)
  running = await fx.service(server)
  await untilReady(running)
  // The registry writer's first run moves the rows with needs of the kinds it writes: done before any stream opens.
  await untilWritten(running)
  const written = (await (await nc.jetstream().views.kv(BUCKETS.registry)).status()).streamInfo.state.last_seq
  await vi.waitFor(() => expect(running.views.byWhat.registry.status().revision).toBeGreaterThanOrEqual(written), { timeout: 5000, interval: 10 })
  await put('needs', 'ace.gitea.secret.db-password')
  await put('applied', 'ace.gitea')
  await put('needs', 'ace.mail.secret.dkim')
  await put('applied', 'ace.mail')
  await put('needs', 'ace.mail.port.smtp')
  await put('needs', 'bob.gitea.config.realm')
  await put('collect', 'cy.environment.loki')
})

describe('live rows', () => {
  test.each(['/v1/nodes/events', '/v1/modules/events', '/v1/modules/events?state=pending&state=unapplied', '/v1/nodes/events?node=ace&node=cy'])('%s sends retry, the rows the answer gives, then synced with its cursor as id', async (path) => {
    const stream = await follow(path)
    expect(stream.status).toBe(200)
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8')
    const synced = await untilEvent(stream, isSynced)
    expect(stream.retry).toBe(2000)
    const answer = await rows(path.replace('/events', ''))
    expect(stream.events.slice(0, synced).map(data)).toEqual(answer)
    expect(stream.events.slice(0, synced).every((e) => e.event === 'put' && e.id === undefined)).toBe(true)
    expect(data(stream.events[synced])).toEqual({ cursor: stream.events[synced]?.id, total: answer.length, stale: false })
  })

  test('puts the rows a write changes, and only those; deletes a row whose state leaves the filter, and one whose keys are gone', async () => {
    const pending = await follow('/v1/modules/events?state=pending')
    const all = await follow('/v1/modules/events')
    const nodes = await follow('/v1/nodes/events')
    const starts = await Promise.all([pending, all, nodes].map(async (s) => await untilEvent(s, isSynced))) as [number, number, number]
    // A need after bob's applied entry: nothing yet (bob.gitea is unapplied, then applied when its entry comes).
    await put('applied', 'bob.gitea')
    const bobApplied = await untilEvent(all, (e) => e.event === 'put' && data(e).node === 'bob', starts[1])
    expect(data(all.events[bobApplied])).toMatchObject({ node: 'bob', module: 'gitea', state: 'applied', waiting: 0, waitingSince: null })
    // Written after the applied entry: pending, waiting one need since its write.
    await put('needs', 'bob.gitea.config.extra')
    const bobPending = await untilEvent(pending, (e) => e.event === 'put' && data(e).node === 'bob', starts[0])
    expect(data(pending.events[bobPending])).toMatchObject({ node: 'bob', module: 'gitea', state: 'pending', waiting: 1 })
    // Applied again: the row leaves ?state=pending.
    await put('applied', 'bob.gitea')
    const left = await untilEvent(pending, (e) => e.event === 'delete', bobPending)
    expect(data(pending.events[left])).toEqual({ node: 'bob', module: 'gitea' })
    // Every key of bob gone: its module row and its node row leave.
    await remove('needs', 'bob.gitea.config.realm')
    await remove('needs', 'bob.gitea.config.extra')
    await remove('applied', 'bob.gitea')
    const gone = await untilEvent(nodes, (e) => e.event === 'delete', starts[2])
    expect(data(nodes.events[gone])).toEqual({ node: 'bob' })
    await untilEvent(all, (e) => e.event === 'delete' && data(e).node === 'bob', bobApplied)
    // No write touched ace or cy: none of their rows was sent again.
    expect(named(all, starts[1] + 1).every(([, row]) => row.startsWith('bob'))).toBe(true)
    expect(named(nodes, starts[2] + 1).every(([, row]) => row === 'bob')).toBe(true)
    // A delete may come for a row the client does not hold (it ignores it); the rows held follow the answers.
    expect(named(pending, starts[0] + 1).filter(([event]) => event === 'put')).toEqual([['put', 'bob.gitea']])
    for (const [s, path] of [[pending, '/v1/modules?state=pending'], [all, '/v1/modules'], [nodes, '/v1/nodes']] as const) {
      const answer = await rows(path)
      await vi.waitFor(() => expect(held(s)).toEqual(answer))
    }
    // Every event after the snapshot has an id.
    for (const s of [pending, all, nodes]) expect(s.events.slice(starts[[pending, all, nodes].indexOf(s)]).every((e) => e.id !== undefined)).toBe(true)
  })

  test('resumed with Last-Event-ID sends the rows that changed or left since, latest per row, then synced', async () => {
    const first = await follow('/v1/modules/events?node=ace&node=dan')
    const synced = await untilEvent(first, isSynced)
    const id = first.events[synced]?.id as string
    first.close()
    await put('needs', 'dan.web.config.site')
    await put('needs', 'dan.web.config.site', '{"again":true}')
    await put('applied', 'ace.mail')
    await put('needs', 'cy.web.config.site')
    const resumed = await follow('/v1/modules/events?node=ace&node=dan', { 'last-event-id': id })
    const done = await untilEvent(resumed, isSynced)
    expect(resumed.events.slice(0, done).map((e) => e.event)).toEqual(['put', 'put'])
    expect(resumed.events.slice(0, done).map(data)).toEqual((await rows('/v1/modules?node=ace&node=dan')).filter((r: any) => r.module === 'mail' || r.node === 'dan'))
    expect(data(resumed.events[done])).toMatchObject({ cursor: resumed.events[done]?.id, total: (await rows('/v1/modules?node=ace&node=dan')).length })
    await remove('needs', 'dan.web.config.site')
    await remove('needs', 'cy.web.config.site')
  })

  test.each([['a malformed id', 'not-a-cursor'], ['an id of buckets created again', '1.1.1-AAAAAAAAAAAAAAAA'], ['an id ahead of this instance', '999999.1.1-AAAAAAAAAAAAAAAA']])('resumed with %s sends reset, a fresh snapshot and synced', async (_what, id) => {
    const stream = await follow('/v1/modules/events', { 'last-event-id': id })
    const done = await untilEvent(stream, isSynced)
    expect(stream.events[0]).toMatchObject({ event: 'reset', id: '' })
    expect(stream.events.slice(1, done).map(data)).toEqual(await rows('/v1/modules'))
  })

  test('puts the rows whose needs are of a kind a registry write adds or removes, on both streams, and no other', async () => {
    await put('needs', 'eve.web.zz-kind.a')
    const modules = await follow('/v1/modules/events')
    const nodes = await follow('/v1/nodes/events')
    const starts = await Promise.all([modules, nodes].map(async (s) => await untilEvent(s, isSynced))) as [number, number]
    expect(held(modules).find((r: any) => r.node === 'eve')).toMatchObject({ module: 'web', unanswered: 1 })
    const registry = await nc.jetstream().views.kv(BUCKETS.registry)
    await registry.put('zz-kind', '{"kind":"zz-kind","module":"test"}')
    const answered = await untilEvent(modules, (e) => e.event === 'put', starts[0])
    expect(data(modules.events[answered])).toMatchObject({ node: 'eve', module: 'web', unanswered: 0 })
    expect(data(nodes.events[await untilEvent(nodes, (e) => e.event === 'put', starts[1])])).toMatchObject({ node: 'eve', unanswered: 0 })
    await registry.delete('zz-kind')
    const again = await untilEvent(modules, (e) => e.event === 'put', answered + 1)
    expect(data(modules.events[again])).toMatchObject({ node: 'eve', module: 'web', unanswered: 1 })
    expect(named(modules, starts[0] + 1).map(([, row]) => row)).toEqual(['eve.web', 'eve.web'])
    await remove('needs', 'eve.web.zz-kind.a')
  })

  test('refuses a state it does not know and a parameter it does not take, before any stream', async () => {
    for (const path of ['/v1/modules/events?state=done', '/v1/nodes/events?module=gitea', '/v1/nodes/events?limit=5']) {
      const res = await request(`${running.url}${path}`)
      expect(res.statusCode, path).toBe(400)
      await res.body.dump()
    }
  })
})

describe('a bucket created again', () => {
  test('sends reset, a fresh snapshot and synced on both streams', async () => {
    const own = fixture()
    const server = await own.server()
    const admin = await own.admin(server)
    const buckets = await createClientBuckets(admin)
    await buckets.needs.put('ace.gitea.secret.db', '{}')
    await buckets.applied.put('ace.gitea', '{}')
    const service = await own.service(server)
    await untilReady(service)
    const streams = await Promise.all(['/v1/nodes/events', '/v1/modules/events'].map(async (p) => await openStream(`${service.url}${p}`)))
    const firsts = await Promise.all(streams.map(async (s) => await untilEvent(s, isSynced)))
    const jsm = await admin.jetstreamManager()
    await jsm.streams.delete(`KV_${BUCKETS.applied}`)
    const applied = await admin.jetstream().views.kv(BUCKETS.applied, { history: 1 })
    await applied.put('zed.gitea', '{}')
    for (const [i, s] of streams.entries()) {
      const reset = await untilEvent(s, (e) => e.event === 'reset', firsts[i], 20_000)
      const again = await untilEvent(s, isSynced, reset, 20_000)
      expect(named(s, reset + 1, again).map(([, row]) => row)).toEqual(i === 0 ? ['ace', 'zed'] : ['ace.gitea', 'zed.gitea'])
      expect(data(s.events[again])).toMatchObject({ total: 2, stale: false })
    }
  }, 60_000)
})
