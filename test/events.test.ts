// The event stream (docs/following-changes.md) through real HTTP against a real nats-server: the snapshot equals the
// list, live changes of the filter and only those, resume by Last-Event-ID (header or query),
// `reset` for a cursor that cannot be served, the refusals before any stream, headers and CORS.

import type { KV, NatsConnection } from 'nats'
import { request } from './support/http.js'
import { beforeAll, describe, expect, test, vi } from 'vitest'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import type { Running } from '../src/service.js'
import { seedSampleMesh } from '../testkit/sample-mesh.js'
import { suiteFixture, untilReady } from './support/service.js'
import { isSynced, openStream, untilEvent, type SseEvent } from './support/sse.js'

const CONSOLE = 'https://console.example'
const fx = suiteFixture()
let nc: NatsConnection
let running: Running
let needs: KV

beforeAll(async () => {
  const server = await fx.server()
  nc = await fx.admin(server)
  await seedSampleMesh(nc)
  needs = await nc.jetstream().views.kv(BUCKETS.needs)
  running = await fx.service(server, { CORS_ORIGINS: CONSOLE })
  await untilReady(running)
})

const follow = async (path: string, headers: Record<string, string> = {}, gate?: () => Promise<void>) => await openStream(`${running.url}${path}`, headers, gate)

async function list (path: string): Promise<{ entries: unknown[], outOfShape: unknown[], total: number }> {
  const res = await request(`${running.url}${path}`)
  return await res.body.json() as { entries: unknown[], outOfShape: unknown[], total: number }
}

const data = (e: SseEvent | undefined): any => JSON.parse(e?.data ?? 'null')
const after = (events: SseEvent[], i: number) => events.slice(i + 1)

describe('a stream', () => {
  test('sends retry, every matching entry and out-of-shape key as the list has them, then synced with its cursor as id', async () => {
    const stream = await follow('/v1/needs/events?node=ace', { origin: CONSOLE })
    expect(stream.status).toBe(200)
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8')
    expect(stream.headers['cache-control']).toBe('no-cache')
    expect(stream.headers['x-accel-buffering']).toBe('no')
    // Over HTTP/1.1 the body ends with the connection: each event is sent as it is, unframed.
    expect(stream.headers['connection']).toBe('close')
    expect(stream.headers['transfer-encoding']).toBeUndefined()
    expect(stream.headers['access-control-allow-origin']).toBe(CONSOLE)
    expect(stream.headers['x-request-id']).toBeDefined()
    const synced = await untilEvent(stream, isSynced)
    expect(stream.retry).toBe(2000)
    const answer = await list('/v1/needs?node=ace&limit=10000')
    const snapshot = stream.events.slice(0, synced)
    expect(snapshot.filter((e) => e.event === 'put').map(data)).toEqual(answer.entries)
    expect(snapshot.filter((e) => e.event === 'outOfShape').map(data)).toEqual(answer.outOfShape)
    expect(snapshot.every((e) => e.id === undefined)).toBe(true)
    const done = stream.events[synced]
    expect(data(done)).toEqual({ cursor: done?.id, total: answer.total, stale: false })
    expect(answer.outOfShape.length).toBeGreaterThan(0)
  })

  test('sends a snapshot longer than a page whole', async () => {
    await Promise.all(Array.from({ length: 600 }, async (_, i) => await needs.put(`bulk.m${i}.config.settings`, `{"i":${i}}`)))
    const stream = await follow('/v1/needs/events')
    const synced = await untilEvent(stream, isSynced)
    const answer = await list('/v1/needs?limit=10000')
    expect(answer.entries.length).toBeGreaterThan(500)
    expect(stream.events.slice(0, synced).filter((e) => e.event === 'put').map(data)).toEqual(answer.entries)
  })

  test('completes a snapshot paged while the bucket moves with the changes made meanwhile: nothing is missed', async () => {
    const value = JSON.stringify({ pad: 'x'.repeat(6000) })
    const key = (i: number): string => `paged.m${String(i).padStart(4, '0')}.config.settings`
    const written = await Promise.all(Array.from({ length: 1500 }, async (_, i) => await needs.put(key(i), value)))
    await vi.waitFor(() => expect(running.views.status().needs.revision).toBeGreaterThanOrEqual(Math.max(...written)), { timeout: 10_000, interval: 20 })
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => { release = resolve })
    // The reader takes one chunk, then nothing until the writes are done: the server is mid-snapshot.
    const stream = await follow('/v1/needs/events?node=paged', {}, async () => await held)
    await vi.waitFor(() => expect(stream.events.length).toBeGreaterThan(0), { timeout: 5000, interval: 10 })
    await needs.delete(key(1))
    await needs.put('paged.m0000a.config.settings', '{"early":true}')
    await needs.put(key(1400), '{"updated":true}')
    await needs.purge(key(1450))
    await needs.put('paged.m9999.config.settings', '{"late":true}')
    const last = await needs.put('paged.odd', '{}')
    expect(stream.events.some(isSynced)).toBe(false)
    release()
    await untilEvent(stream, (e) => e.id === undefined ? false : Number(e.id.split('-')[0]) >= last)
    const shown = new Map<string, unknown>()
    const odd = new Set<string>()
    for (const e of stream.events) {
      const d = data(e)
      if (e.event === 'put') shown.set(d.key, d)
      if (e.event === 'delete') { shown.delete(d.key); odd.delete(d.key) }
      if (e.event === 'outOfShape') odd.add(d.key)
    }
    const entries: Array<{ key: string }> = []
    let page = await list('/v1/needs?node=paged') as { entries: Array<{ key: string }>, outOfShape: Array<{ key: string }>, next?: string }
    const outOfShape = page.outOfShape
    for (;;) {
      entries.push(...page.entries)
      if (page.next === undefined) break
      page = await list(`/v1/needs?node=paged&after=${page.next}`) as typeof page
    }
    expect(entries).toHaveLength(1500 + 1 - 2 + 1)
    expect([...shown.keys()].sort()).toEqual(entries.map((e) => e.key))
    expect(entries.every((e) => JSON.stringify(shown.get(e.key)) === JSON.stringify(e))).toBe(true)
    expect([...odd]).toEqual(outOfShape.map((o) => o.key))
  }, 30_000)

  test('then sends each change the filter keeps, in revision order with its cursor as id, and none it does not', async () => {
    const stream = await follow('/v1/needs/events?node=ace&kind=port')
    const synced = await untilEvent(stream, isSynced)
    await needs.put('g14.gitea.port.9000', '{"wanted":9000}')
    await needs.put('ace.gitea.secret.other', '{}')
    const put = await needs.put('ace.gitea.port.9000', '{"wanted":9000}')
    // Seen before the next change: a key changed twice between two reads is sent once, at its latest.
    await untilEvent(stream, (e) => e.event === 'put', synced)
    await needs.delete('ace.gitea.port.9000')
    const deleted = put + 1
    await untilEvent(stream, (e) => e.event === 'delete', synced)
    const live = after(stream.events, synced)
    expect(live.map((e) => [e.event, e.id])).toEqual([
      ['put', expect.stringMatching(new RegExp(`^${put}-\\d+$`))],
      ['delete', expect.stringMatching(new RegExp(`^${deleted}-\\d+$`))]
    ])
    expect(data(live[0])).toMatchObject({ key: 'ace.gitea.port.9000', node: 'ace', module: 'gitea', kind: 'port', name: '9000', value: { wanted: 9000 }, revision: put })
    expect(data(live[1])).toEqual({ key: 'ace.gitea.port.9000', node: 'ace', module: 'gitea', kind: 'port', name: '9000', revision: deleted })
  })

  test('resumed with Last-Event-ID sends the changes missed, latest per key, deletions included, then synced', async () => {
    const first = await follow('/v1/applied/events?node=novox')
    const id = first.events[await untilEvent(first, isSynced)]?.id as string
    first.close()
    const applied = await nc.jetstream().views.kv(BUCKETS.applied)
    await applied.put('novox.extra', '"one"')
    const last = await applied.put('novox.extra', '"two"')
    await applied.delete('novox.gitea')
    const gone = last + 1
    await applied.put('ace.extra', '"elsewhere"')
    const resumed = await follow('/v1/applied/events?node=novox', { 'last-event-id': id })
    const synced = await untilEvent(resumed, isSynced)
    expect(resumed.events.slice(0, synced).map((e) => [e.event, data(e).key, data(e).revision])).toEqual([
      ['put', 'novox.extra', last],
      ['delete', 'novox.gitea', gone]
    ])
    expect(data(resumed.events[synced])).toMatchObject({ cursor: `${gone}-${id.split('-')[1] as string}`, stale: false })
    expect(data(resumed.events[synced]).total).toBe((await list('/v1/applied?node=novox')).total)
    // The query's alias, when no header is sent; the header wins over it.
    const byQuery = await follow(`/v1/applied/events?node=novox&lastEventId=${id}`)
    expect(byQuery.events.slice(0, await untilEvent(byQuery, isSynced)).map((e) => e.event)).toEqual(['put', 'delete'])
    const both = await follow('/v1/applied/events?node=novox&lastEventId=nonsense', { 'last-event-id': id })
    expect(both.events.slice(0, await untilEvent(both, isSynced)).map((e) => e.event)).toEqual(['put', 'delete'])
  })

  test.each([
    ['a malformed id', 'not-a-cursor', /Last-Event-ID: "not-a-cursor" is not a cursor/],
    ['another generation', '5-1700000000000000000', /another generation of bucket mesh-provisioner_collect/],
    ['a generation that never was', '5-123', /since "5-123" is not a cursor this service gave/]
  ])('resumed with %s sends reset, a fresh snapshot and synced', async (_what, id, reason) => {
    const stream = await follow('/v1/collect/events?node=g14', { 'last-event-id': id })
    const synced = await untilEvent(stream, isSynced)
    expect(stream.events[0]).toMatchObject({ event: 'reset', id: '' })
    expect(data(stream.events[0]).reason).toMatch(reason)
    const answer = await list('/v1/collect?node=g14&limit=10000')
    expect(stream.events.slice(1, synced).filter((e) => e.event === 'put').map(data)).toEqual(answer.entries)
  })
})

describe('refused before any stream', () => {
  test.each([
    ['/v1/needs/events?node=a%20b', 'node'],
    ['/v1/needs/events?since=1-1', 'since'],
    ['/v1/needs/events?after=x', 'after'],
    ['/v1/needs/events?limit=5', 'limit'],
    ['/v1/needs/events?wait=5s', 'wait'],
    ['/v1/needs/events?foo=1', 'foo'],
    ['/v1/needs/events?collection=shell', 'collection'],
    ['/v1/registry/events?node=ace', 'node'],
    ['/v1/needs/events?lastEventId=1&lastEventId=2', 'lastEventId']
  ])('%s is 400 naming %s', async (path, field) => {
    const got = await follow(path)
    expect(got.status).toBe(400)
    expect(got.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(JSON.parse(got.body)).toMatchObject({ error: { code: 'BAD_REQUEST', field } })
  })

  test('HEAD answers the headers a stream would have and holds nothing open; other methods are 405', async () => {
    const head = await request(`${running.url}/v1/needs/events`, { method: 'HEAD' })
    await head.body.text()
    expect(head.statusCode).toBe(200)
    expect(head.headers['content-type']).toBe('text/event-stream; charset=utf-8')
    const post = await request(`${running.url}/v1/needs/events`, { method: 'POST' })
    await post.body.text()
    expect(post.statusCode).toBe(405)
    const metrics = async (): Promise<string> => await (await request(`${running.url}/metrics`)).body.text()
    await expect.poll(metrics, { timeout: 5000 }).toMatch(/^mesh_provisioner_event_streams 0$/m)
    expect(await metrics()).toMatch(/^mesh_provisioner_events_sent_total\{type="synced"\} [1-9]/m)
  })

  test('a kind named events is read with /v1/registry?kind=events, and /v1/registry/events is the stream', async () => {
    const stream = await follow('/v1/registry/events?kind=secret')
    const synced = await untilEvent(stream, isSynced)
    expect(stream.events.slice(0, synced).map((e) => data(e).key)).toEqual(['secret'])
  })
})
