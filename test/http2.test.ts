// HTTP/2 with TLS (docs/access.md): the gateway under a certificate the test makes speaks HTTP/2 and
// HTTP/1.1 on one port, chosen by ALPN; lists and event streams work over HTTP/2, several streams
// share one connection, and a stream's close and a stalled reader end that stream alone; a session
// that asks and never reads is cut past its bound, and holds no stop up; headers too large are 431.

import { readFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { NatsConnection } from 'nats'
import { Agent, request } from 'undici'
import { beforeAll, expect, onTestFinished, test, vi } from 'vitest'
import type { Running } from '../src/service.js'
import { seedSampleMesh } from '../testkit/sample-mesh.js'
import { PER_CONNECTION_BYTES } from '../src/http/unsent.js'
import { selfSigned } from './support/certificate.js'
import { fixture, suiteFixture, untilReady } from './support/service.js'
import { SseParser } from './support/sse.js'

const fx = suiteFixture()
let serverRef: Awaited<ReturnType<typeof fx.server>>
let running: Running
let nc: NatsConnection
let ca: string
let tls: { HTTP_TLS_CERT: string, HTTP_TLS_KEY: string }
/** Entries of node `big`: a page of them (1000) is about 1 MB. */
const BIG_ENTRIES = 1500

beforeAll(async () => {
  const server = await fx.server()
  nc = await fx.admin(server)
  await seedSampleMesh(nc)
  const { certFile, keyFile } = selfSigned(await mkdtemp(join(tmpdir(), 'mesh-provisioner-http2-')))
  ca = readFileSync(certFile, 'utf8')
  tls = { HTTP_TLS_CERT: certFile, HTTP_TLS_KEY: keyFile }
  const needs = await nc.jetstream().views.kv('mesh-provisioner_needs')
  const fill = JSON.stringify({ fill: 'x'.repeat(1000) })
  for (let i = 0; i < BIG_ENTRIES; i += 100) await Promise.all(Array.from({ length: 100 }, async (_, j) => await needs.put(`big.m${String(i + j).padStart(4, '0')}.secret.k`, fill)))
  running = await fx.service(server, tls, { eventStallMs: 300 })
  await untilReady(running)
  await vi.waitFor(() => { expect(running.views.status().needs.keys).toBeGreaterThan(BIG_ENTRIES) }, { timeout: 10_000, interval: 20 })
  serverRef = server
})

/** An HTTP/2 session to the gateway, closed when the test ends. */
async function session (): Promise<ClientHttp2Session> {
  const s = connect(running.url, { ca })
  onTestFinished(() => { s.destroy() })
  await new Promise<void>((resolve, reject) => { s.once('connect', () => resolve()); s.once('error', reject) })
  return s
}

interface H2Got { headers: IncomingHttpHeaders, body: string }

async function h2get (s: ClientHttp2Session, path: string, sent: Record<string, string> = {}): Promise<H2Got> {
  const stream = s.request({ ':path': path, ...sent })
  const headers = await new Promise<IncomingHttpHeaders>((resolve) => stream.once('response', resolve))
  let body = ''
  stream.setEncoding('utf8')
  for await (const chunk of stream) body += chunk as string
  return { headers, body }
}

/** An event stream over an HTTP/2 session, parsed as it arrives. */
async function h2stream (s: ClientHttp2Session, path: string): Promise<{ stream: ClientHttp2Stream, headers: IncomingHttpHeaders, sse: SseParser }> {
  const stream = s.request({ ':path': path, accept: 'text/event-stream' })
  const headers = await new Promise<IncomingHttpHeaders>((resolve) => stream.once('response', resolve))
  const sse = new SseParser()
  stream.setEncoding('utf8')
  stream.on('data', (chunk: string) => sse.feed(chunk))
  return { stream, headers, sse }
}

const until = async (sse: SseParser, match: (e: { event: string, data: string }) => boolean): Promise<void> => {
  await vi.waitFor(() => { expect(sse.events.some(match), 'the event').toBe(true) }, { timeout: 10_000, interval: 20 })
}

const openStreams = async (): Promise<number> => {
  const res = await request(`${running.url}/metrics`, { dispatcher: new Agent({ connect: { ca } }) })
  return Number(/^mesh_provisioner_event_streams (\d+)$/m.exec(await res.body.text())?.[1])
}

test('answers a list over HTTP/2 (ALPN h2), byte for byte what HTTP/1.1 answers on the same port', async () => {
  const s = await session()
  expect(s.alpnProtocol).toBe('h2')
  const h2 = await h2get(s, '/v1/needs?node=ace&node=g14')
  expect(h2.headers[':status']).toBe(200)
  expect(h2.headers['content-type']).toBe('application/json; charset=utf-8')
  const h1 = await request(`${running.url}/v1/needs?node=ace&node=g14`, { dispatcher: new Agent({ connect: { ca } }) })
  expect(h1.statusCode).toBe(200)
  expect(await h1.body.text()).toBe(h2.body)
  expect(h2.headers['etag']).toBe(h1.headers['etag'])
  // undici's own HTTP/2 (allowH2) reads it too.
  const undiciH2 = await request(`${running.url}/v1/needs?node=ace&node=g14`, { dispatcher: new Agent({ allowH2: true, connect: { ca } }) })
  expect([undiciH2.statusCode, await undiciH2.body.text()]).toEqual([200, h2.body])
})

test('holds several event streams on one HTTP/2 connection; each follows its changes, and a stream closed by its reader ends alone', async () => {
  // A header HTTP/2 forbids (Connection) is dropped by Node with a warning: the stream sets none.
  const warnings: string[] = []
  const warned = (w: Error): void => { warnings.push(w.message) }
  process.on('warning', warned)
  onTestFinished(() => { process.off('warning', warned) })
  const s = await session()
  const ace = await h2stream(s, '/v1/applied/events?node=ace')
  const g14 = await h2stream(s, '/v1/applied/events?node=g14')
  for (const { headers } of [ace, g14]) {
    expect(headers[':status']).toBe(200)
    expect(headers['content-type']).toBe('text/event-stream; charset=utf-8')
    expect(headers['connection']).toBeUndefined()
  }
  await until(ace.sse, (e) => e.event === 'synced')
  await until(g14.sse, (e) => e.event === 'synced')
  const before = await openStreams()
  const kv = await nc.jetstream().views.kv('mesh-provisioner_applied')
  await kv.put('ace.h2-module', '{"over":"h2"}')
  await kv.put('g14.h2-module', '{"over":"h2"}')
  await until(ace.sse, (e) => e.event === 'put' && e.data.includes('"key":"ace.h2-module"'))
  await until(g14.sse, (e) => e.event === 'put' && e.data.includes('"key":"g14.h2-module"'))
  expect(ace.sse.events.some((e) => e.data.includes('g14.h2-module'))).toBe(false)

  ace.stream.close(constants.NGHTTP2_CANCEL)
  await vi.waitFor(async () => { expect(await openStreams()).toBe(before - 1) }, { timeout: 5000, interval: 50 })
  await kv.put('g14.h2-module', '{"still":"here"}')
  await until(g14.sse, (e) => e.event === 'put' && e.data.includes('"still":"here"'))
  expect(s.closed || s.destroyed).toBe(false)
  expect((await h2get(s, '/healthz')).headers[':status']).toBe(200)
  expect(warnings).toEqual([])
})

test('ends a stream whose reader stops reading, and not the connection it shares', async () => {
  const s = await session()
  const slow = await h2stream(s, '/v1/needs/events?node=shanks')
  await until(slow.sse, (e) => e.event === 'synced')
  const streams = await openStreams()
  slow.stream.pause()
  const ended = new Promise<void>((resolve) => slow.stream.once('close', () => resolve()))
  const kv = await nc.jetstream().views.kv('mesh-provisioner_needs')
  const big = JSON.stringify({ fill: 'x'.repeat(60_000) })
  // More than the connection's flow-control window: the server's writes back up and its stall bound cuts the stream.
  for (let i = 0; i < 40; i++) await kv.put(`shanks.h2-slow.secret.k${i}`, big)
  await vi.waitFor(async () => { expect(await openStreams(), 'the stream ended by the server').toBe(streams - 1) }, { timeout: 10_000, interval: 50 })
  slow.stream.resume()
  await ended
  expect(s.destroyed).toBe(false)
  expect((await h2get(s, '/v1/needs?node=ace&limit=1')).headers[':status']).toBe(200)
})

/** A session whose client never reads: its flow-control window is 0, so no answer's bytes can go. */
async function unreadSession (url: string): Promise<ClientHttp2Session> {
  const s = connect(url, { ca, settings: { initialWindowSize: 0 } })
  s.on('error', () => {})
  onTestFinished(() => { s.destroy() })
  await new Promise<void>((resolve, reject) => { s.once('connect', () => resolve()); s.once('error', reject) })
  return s
}

test('a session that asks for answers and never reads is cut past its bound, and what its answers held is let go', async () => {
  const s = await unreadSession(running.url)
  const closed = new Promise<void>((resolve) => s.once('close', () => resolve()))
  // Distinct pages of about 1 MB each: more than one connection may hold unsent.
  const pages = Math.ceil(2 * PER_CONNECTION_BYTES / 1_000_000)
  for (let i = 0; i < pages; i++) s.request({ ':path': `/v1/needs?node=big&after=big.m${String(i).padStart(4, '0')}.secret.k` }).on('error', () => {})
  await closed
  await vi.waitFor(() => { expect(running.app.unsentBytes()).toBe(0) }, { timeout: 10_000, interval: 20 })
  // The gateway answers the next session as ever.
  expect((await h2get(await session(), '/healthz')).headers[':status']).toBe(200)
})

test('a stop ends an HTTP/2 stream whose reader stopped reading at once, where it held the stop for good', async () => {
  const own = await fixture().service(serverRef, tls)
  await untilReady(own)
  const s = await unreadSession(own.url)
  const stream = s.request({ ':path': '/v1/needs?node=ace' })
  stream.on('error', () => {})
  expect((await new Promise<IncomingHttpHeaders>((resolve) => stream.once('response', resolve)))[':status']).toBe(200)
  const started = Date.now()
  await own.stop()
  // main's close-with-grace gives a stop 8 s before it exits 1: a few seconds at most.
  expect(Date.now() - started).toBeLessThan(3000)
})

test.each([20_000, 60_000])('headers of %d bytes are 431 with the error body HTTP/1.1 answers, on an open route and a list alike', async (size) => {
  const big = { 'x-big': 'a'.repeat(size) }
  const h1 = await request(`${running.url}/healthz`, { headers: big, dispatcher: new Agent({ connect: { ca } }) })
  const h1Body = await h1.body.text()
  expect(h1.statusCode).toBe(431)
  const s = await session()
  for (const path of ['/healthz', '/v1/needs?node=ace']) {
    const h2 = await h2get(s, path, big)
    expect([h2.headers[':status'], h2.headers['content-type'], h2.body]).toEqual([431, 'application/json; charset=utf-8', h1Body])
  }
  // The session goes on.
  expect((await h2get(s, '/healthz')).headers[':status']).toBe(200)
})
