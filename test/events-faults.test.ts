// The event stream through what it must withstand, each test with its own nats-server: NATS killed
// and restarted (stale, live), a bucket deleted and created again (reset), a service restart and a
// second instance (resume by id), a reader that does not read, the stream limit, the heartbeat,
// the stop, and the bearer tokens (EventSource's access_token).

import { connect } from 'node:net'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from './support/http.js'
import { describe, expect, test } from 'vitest'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import { newToken } from '../src/settings/tokens-file.js'
import type { Running } from '../src/service.js'
import { createClientBuckets, seedSampleMesh } from '../testkit/sample-mesh.js'
import { fixture, killAndRestart, startSeeded, untilReady } from './support/service.js'
import { isSynced, openStream, untilEvent, type SseEvent } from './support/sse.js'
import { viewReached } from './support/seen-writes.js'

const data = (e: SseEvent | undefined): any => JSON.parse(e?.data ?? 'null')
const generationOf = (cursor: string): string => cursor.split('-')[1] as string

/** The open streams gauge, as a scraper reads it. */
async function openStreams (running: Running): Promise<number> {
  const text = await (await request(`${running.url}/metrics`)).body.text()
  return Number(/^mesh_provisioner_event_streams (\d+)$/m.exec(text)?.[1])
}

describe('the view changes under an open stream', () => {
  test('says stale while NATS is away and live when it is back, and goes on with the changes', async () => {
    const fx = fixture()
    const { server, nc, running } = await startSeeded(fx)
    const stream = await openStream(`${running.url}/v1/needs/events?node=ace`)
    const synced = await untilEvent(stream, isSynced)
    await killAndRestart(server, { reconnecting: [running.nc, nc] })
    const stale = await untilEvent(stream, (e) => e.event === 'stale', synced)
    expect(data(stream.events[stale]).reason).toMatch(/cut off from NATS/)
    const live = await untilEvent(stream, (e) => e.event === 'live', stale)
    const kv = await nc.jetstream().views.kv(BUCKETS.needs)
    const revision = await kv.put('ace.after.config.restart', '{}')
    const put = await untilEvent(stream, (e) => e.event === 'put', live)
    expect(data(stream.events[put])).toMatchObject({ key: 'ace.after.config.restart', revision })
  }, 60_000)

  test('sends reset, a fresh snapshot of the new bucket and synced when the bucket is deleted and created again', async () => {
    const fx = fixture()
    const { nc, running } = await startSeeded(fx)
    const stream = await openStream(`${running.url}/v1/applied/events?node=ace`)
    const first = await untilEvent(stream, isSynced)
    const jsm = await nc.jetstreamManager()
    await jsm.streams.delete(`KV_${BUCKETS.applied}`)
    const kv = await nc.jetstream().views.kv(BUCKETS.applied, { history: 1 })
    await kv.put('ace.fresh', '{"new":true}')
    await kv.put('g14.fresh', '{"new":true}')
    const reset = await untilEvent(stream, (e) => e.event === 'reset', first, 20_000)
    expect(stream.events[reset]?.id).toBe('')
    const again = await untilEvent(stream, isSynced, reset, 20_000)
    expect(stream.events.slice(reset + 1, again).map((e) => [e.event, data(e).key])).toEqual([['put', 'ace.fresh']])
    expect(generationOf(data(stream.events[again]).cursor)).not.toBe(generationOf(data(stream.events[first]).cursor))
    expect(data(stream.events[again])).toMatchObject({ total: 1, stale: false })
  }, 60_000)

  test('says stale while the bucket is missing, and sends its snapshot once it appears', async () => {
    const fx = fixture()
    const server = await fx.server()
    const nc = await fx.admin(server)
    const running = await fx.service(server)
    await untilReady(running)
    const stream = await openStream(`${running.url}/v1/collect/events`)
    expect(stream.status).toBe(200)
    await untilEvent(stream, (e) => e.event === 'stale')
    expect(data(stream.events[0]).reason).toMatch(/bucket mesh-provisioner_collect does not exist/)
    await createClientBuckets(nc)
    const kv = await nc.jetstream().views.kv(BUCKETS.collect)
    await kv.put('ace.environment.gitea', '{}')
    const put = await untilEvent(stream, (e) => e.event === 'put')
    const synced = await untilEvent(stream, isSynced)
    // The view may find the bucket before the put or after it: the put comes in the snapshot, or
    // as the first change after `synced`.
    expect(stream.events.slice(1, Math.max(put, synced) + 1).map((e) => e.event)).toEqual(put < synced ? ['live', 'put', 'synced'] : ['live', 'synced', 'put'])
  }, 30_000)
})

describe('resume by id', () => {
  test('across a service restart: the stop ends the stream at once, and the next instance sends what it missed', async () => {
    const fx = fixture()
    const { server, nc } = await startSeeded(fx)
    const first = await fx.service(server)
    await untilReady(first)
    const stream = await openStream(`${first.url}/v1/needs/events?node=g14`)
    const id = stream.events[await untilEvent(stream, isSynced)]?.id as string
    // A connection that asks nothing (a browser's preconnect) must not hold the stop either.
    const silent = connect(Number(new URL(first.url).port), '127.0.0.1')
    await new Promise((resolve) => silent.once('connect', resolve))
    await first.stop()
    await stream.ended
    silent.destroy()
    const kv = await nc.jetstream().views.kv(BUCKETS.needs)
    const put = await kv.put('g14.new.config.settings', '{}')
    await kv.purge('g14.gitea.port.8080')
    const second = await fx.service(server)
    await untilReady(second)
    const resumed = await openStream(`${second.url}/v1/needs/events?node=g14`, { 'last-event-id': id })
    const synced = await untilEvent(resumed, isSynced)
    expect(resumed.events.slice(0, synced).map((e) => [e.event, data(e).key, data(e).revision])).toEqual([
      ['put', 'g14.new.config.settings', put],
      ['delete', 'g14.gitea.port.8080', put + 1]
    ])
  }, 20_000)

  test('across two instances: a stream on one resumes on the other from its last id', async () => {
    const fx = fixture()
    const { server, nc, running: a } = await startSeeded(fx)
    const b = await fx.service(server)
    await untilReady(b)
    const kv = await nc.jetstream().views.kv(BUCKETS.needs)
    const stream = await openStream(`${a.url}/v1/needs/events?module=gitea`)
    const synced = await untilEvent(stream, isSynced)
    await kv.put('shanks.gitea.config.one', '1')
    const live = await untilEvent(stream, (e) => e.event === 'put', synced)
    stream.close()
    await kv.delete('shanks.gitea.config.one')
    const two = await kv.put('shanks.gitea.config.two', '2')
    // b has read both writes before the stream resumes on it: its `synced` follows what b has read,
    // and this test is of the resume, not of b's pace under load.
    await viewReached(b, 'needs', two)
    const resumed = await openStream(`${b.url}/v1/needs/events?module=gitea`, { 'last-event-id': stream.events[live]?.id as string })
    const done = await untilEvent(resumed, isSynced)
    expect(resumed.events.slice(0, done).map((e) => [e.event, data(e).key])).toEqual([
      ['delete', 'shanks.gitea.config.one'],
      ['put', 'shanks.gitea.config.two']
    ])
    expect(data(resumed.events[done]).cursor).toBe(`${two}-${generationOf(stream.events[live]?.id as string)}`)
  }, 30_000)
})

describe('bounds', () => {
  test('disconnects a reader that does not read before its stream holds more than a bounded amount', async () => {
    const fx = fixture()
    const server = await fx.server()
    const nc = await fx.admin(server)
    const { needs } = await createClientBuckets(nc)
    // Far more than the socket buffers of both ends hold: the server's writes stop draining.
    const value = JSON.stringify({ pad: 'x'.repeat(700_000) })
    for (let i = 0; i < 24; i++) await needs.put(`big.m${i}.config.settings`, value)
    const running = await fx.service(server, {}, { eventStallMs: 300 })
    await untilReady(running)
    const { port } = new URL(running.url)
    const socket = connect(Number(port), '127.0.0.1')
    socket.pause()
    socket.write('GET /v1/needs/events?node=big HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n')
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    try {
      await expect.poll(async () => await openStreams(running), { timeout: 10_000 }).toBe(1)
      await expect.poll(async () => await openStreams(running), { timeout: 10_000 }).toBe(0)
      socket.resume()
      await closed
    } finally {
      socket.destroy()
    }
  }, 60_000)

  test('holds HTTP_MAX_STREAMS streams at most: 503 with Retry-After beyond', async () => {
    const fx = fixture()
    const server = await fx.server()
    await seedSampleMesh(await fx.admin(server))
    const running = await fx.service(server, { HTTP_MAX_STREAMS: '2' })
    await untilReady(running)
    const url = `${running.url}/v1/applied/events`
    const one = await openStream(url)
    const two = await openStream(url)
    await untilEvent(one, isSynced)
    await untilEvent(two, isSynced)
    const three = await openStream(url)
    expect(three.status).toBe(503)
    expect(three.headers['retry-after']).toBe('5')
    expect(JSON.parse(three.body)).toEqual({ error: { code: 'NOT_READY', message: 'this instance holds 2 event streams, its most (HTTP_MAX_STREAMS), and this caller holds 2 of an even share of 2; try again in 5 s or ask another instance' } })
    one.close()
    await expect.poll(async () => (await openStream(url)).status, { timeout: 5000 }).toBe(200)
  }, 30_000)

  test('sends a comment line while nothing happens', async () => {
    const fx = fixture()
    const server = await fx.server()
    await seedSampleMesh(await fx.admin(server))
    const running = await fx.service(server, {}, { eventHeartbeatMs: 50 })
    await untilReady(running)
    const stream = await openStream(`${running.url}/v1/registry/events`)
    await untilEvent(stream, isSynced)
    const before = stream.comments
    await expect.poll(() => stream.comments, { timeout: 5000 }).toBeGreaterThanOrEqual(before + 2)
  }, 30_000)
})

describe('bearer tokens', () => {
  test('refuses a stream without a token (401), takes access_token in the query, and scopes a node token', async () => {
    const fx = fixture()
    const server = await fx.server()
    await seedSampleMesh(await fx.admin(server))
    const console = newToken('console', '*', false)
    const ace = newToken('ace', ['ace'], false)
    const dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-events-'))
    const file = join(dir, 'tokens.json')
    await writeFile(file, JSON.stringify({ tokens: [console.entry, ace.entry] }))
    const running = await fx.service(server, { HTTP_TOKENS_FILE: file })
    await untilReady(running)
    const url = `${running.url}/v1/needs/events`
    const refused = await openStream(url)
    expect(refused.status).toBe(401)
    expect(refused.headers['www-authenticate']).toBe('Bearer realm="mesh-provisioner"')
    expect(JSON.parse(refused.body).error.message).toMatch(/access_token=<token> in the query/)
    expect((await openStream(`${url}?access_token=wrong`)).status).toBe(401)
    const byQuery = await openStream(`${url}?node=ace&access_token=${console.token}`)
    expect(byQuery.status).toBe(200)
    await untilEvent(byQuery, isSynced)
    const scoped = await openStream(`${url}?node=ace&access_token=${ace.token}`)
    expect(scoped.status).toBe(200)
    expect((await openStream(`${url}?node=g14&access_token=${ace.token}`)).status).toBe(403)
    expect((await openStream(`${url}?node=ace`, { authorization: `Bearer ${ace.token}` })).status).toBe(200)
  }, 30_000)
})
