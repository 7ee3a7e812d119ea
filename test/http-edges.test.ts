// The gateway's edges through real HTTP against a real nats-server: the one-entry routes (entry,
// ETag, 304, 404, 400 naming the segment), every status with a code of its own (405 whatever the
// body, Node's own client errors in the service's body, bounded quotes), a raw # in the request
// line, numbers and durations read whole, one length limit for path segments on every route, and
// keys longer than 1024 bytes paged through on both faces.

import { connect } from 'node:net'
import type { NatsConnection } from 'nats'
import { request } from './support/http.js'
import { PER_CONNECTION_BYTES } from '../src/http/unsent.js'
import { beforeAll, describe, expect, test, vi } from 'vitest'
import type { Running } from '../src/service.js'
import { startSeeded, suiteFixture, untilWritten } from './support/service.js'
import { requestVerb } from './support/verb.js'

const JSON_TYPE = 'application/json; charset=utf-8'

interface Got { status: number, headers: Record<string, string | string[] | undefined>, body: string }

const fx = suiteFixture()
let nc: NatsConnection
let running: Running

async function http (path: string, opts: { method?: string, headers?: Record<string, string>, body?: string } = {}): Promise<Got> {
  const res = await request(`${running.url}${path}`, { method: (opts.method ?? 'GET') as 'GET', headers: opts.headers ?? {}, ...(opts.body === undefined ? {} : { body: opts.body }) })
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() }
}

/** Sends `text` as it is on a socket of its own and gives all the server wrote back until it closed. */
async function raw (text: string): Promise<{ head: string, body: string }> {
  const { hostname, port } = new URL(running.url)
  const socket = connect(Number(port), hostname)
  const chunks: Buffer[] = []
  socket.on('data', (chunk: Buffer) => chunks.push(chunk))
  socket.write(text)
  await new Promise<void>((resolve, reject) => { socket.on('close', () => { resolve() }); socket.on('error', reject) })
  const [head = '', body = ''] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n')
  return { head, body }
}

/** The verb's reply to the same request, as text, with its error code header when refused. */
async function verb (payload: Record<string, unknown>): Promise<{ body: string, code: string | undefined }> {
  const msg = await requestVerb(nc, JSON.stringify(payload))
  return { body: new TextDecoder().decode(msg.data), code: msg.headers?.get('Nats-Service-Error-Code') || undefined }
}

const refused = (code: string, message: string, field?: string) => JSON.stringify({ error: { code, message, ...(field === undefined ? {} : { field }) } })

/** The requests counted by route and outcome on /metrics. */
async function counted (route: string, outcome: string): Promise<number> {
  const line = (await http('/metrics')).body.split('\n').find((l) => l.startsWith(`mesh_provisioner_requests_total{face="http",route="${route}",outcome="${outcome}"}`))
  return line === undefined ? 0 : Number(line.split(' ').at(-1))
}

beforeAll(async () => {
  const seeded = await startSeeded(fx)
  nc = seeded.nc
  running = seeded.running
  await untilWritten(running)
  await vi.waitFor(() => expect(running.views.status().registry.keys).toBeGreaterThan(0), { timeout: 10_000, interval: 50 })
})

describe('one-entry routes', () => {
  test.each([
    ['/v1/registry/secret', { what: 'registry', kind: 'secret' }],
    ['/v1/needs/ace/gitea/secret/db-password', { what: 'needs', node: 'ace', module: 'gitea', kind: 'secret', name: 'db-password' }],
    ['/v1/applied/ace/gitea', { what: 'applied', node: 'ace', module: 'gitea' }],
    ['/v1/collect/ace/shell%3Azsh%3Anormal/gitea', { what: 'collect', node: 'ace', collection: 'shell:zsh:normal', contributor: 'gitea' }],
    ['/v1/collect/g14/contribution%3Aroute%3Dproxy/gitea', { what: 'collect', node: 'g14', collection: 'contribution:route=proxy', contributor: 'gitea' }]
  ])('GET %s answers the entry the list holds', async (path, payload) => {
    const [got, bus] = await Promise.all([http(path), verb(payload)])
    const list = JSON.parse(bus.body) as { entries: unknown[] }
    expect(list.entries).toHaveLength(1)
    expect([got.status, got.headers['content-type'], got.body]).toEqual([200, JSON_TYPE, JSON.stringify(list.entries[0])])
    expect(got.headers['etag']).toMatch(/^"\d+-c-[\w.-]+-0"$/)
  })

  test.each([
    ['/v1/needs/ace/gitea/secret/smtp-password', 'bucket mesh-provisioner_needs holds no node.module.kind.name entry "ace.gitea.secret.smtp-password"; ask the list (what=needs) to see what it holds'],
    ['/v1/applied/ace/nothing', 'bucket mesh-provisioner_applied holds no node.module entry "ace.nothing"; ask the list (what=applied) to see what it holds'],
    ['/v1/collect/ace/shell%3Abash/gitea', 'bucket mesh-provisioner_collect holds no node.collection.contributor entry "ace.shell=3Abash.gitea"; ask the list (what=collect) to see what it holds'],
    // A key token of 101 to 256 characters is a kind like any other: the router does not judge its length.
    [`/v1/registry/${'k'.repeat(200)}`, `bucket mesh-provisioner_registry holds no kind entry "${'k'.repeat(200)}"; ask the list (what=registry) to see what it holds`]
  ])('GET %s is 404 NOT_FOUND when absent', async (path, message) => {
    const got = await http(path)
    expect([got.status, got.headers['content-type'], got.body]).toEqual([404, JSON_TYPE, refused('NOT_FOUND', message)])
  })

  test.each([
    ['/v1/applied/a%20b/gitea', { what: 'applied', node: 'a b' }],
    ['/v1/needs/ace/gitea/secret/db.password', { what: 'needs', name: 'db.password' }],
    ['/v1/collect/ace/shell%3Azsh%3Anormal/gi%3Atea', { what: 'collect', contributor: 'gi:tea' }],
    [`/v1/collect/ace/${'c'.repeat(257)}/gitea`, { what: 'collect', collection: 'c'.repeat(257) }],
    // One limit on every route: the schema's 256 characters, named like any other refusal.
    [`/v1/registry/${'k'.repeat(257)}`, { what: 'registry', kind: 'k'.repeat(257) }],
    [`/v1/needs/${'n'.repeat(257)}/gitea/secret/x`, { what: 'needs', node: 'n'.repeat(257) }],
    [`/v1/needs?node=${'n'.repeat(257)}`, { what: 'needs', node: 'n'.repeat(257) }]
  ])('GET %s: a segment no key token could hold is 400 naming it, in the verb\'s words', async (path, payload) => {
    const [got, bus] = await Promise.all([http(path), verb(payload)])
    expect(bus.code).toBe('400')
    expect([got.status, got.headers['content-type'], got.body]).toEqual([400, JSON_TYPE, bus.body])
    expect(JSON.parse(got.body)).toMatchObject({ error: { field: expect.any(String) } })
  })

  test.each([
    ['/v1/applied//gitea', refused('BAD_REQUEST', 'the path gives no node; GET /v1/applied/:node/:module takes every field of the key', 'node')],
    ['/v1/applied/ace/gitea?node=ace', refused('BAD_REQUEST', '"node" is not a parameter of GET /v1/applied/:node/:module; it takes none', 'node')],
    ['/v1/collect/ace/environment/gitea?limit=1', refused('BAD_REQUEST', '"limit" is not a parameter of GET /v1/collect/:node/:collection/:contributor; it takes none', 'limit')]
  ])('GET %s is 400', async (path, body) => {
    const got = await http(path)
    expect([got.status, got.body]).toEqual([400, body])
  })

  test('an entry\'s ETag moves only when that entry changes; 304 while it holds', async () => {
    const kv = await nc.jetstream().views.kv('mesh-provisioner_applied')
    await kv.put('etag.one', JSON.stringify({ plan: 'one@1' }))
    const path = '/v1/applied/etag/one'
    const first = await vi.waitFor(async () => {
      const got = await http(path)
      expect(got.status).toBe(200)
      return got
    }, { timeout: 10_000, interval: 50 })
    const etag = first.headers['etag'] as string
    const same = await http(path, { headers: { 'if-none-match': etag } })
    expect([same.status, same.body, same.headers['etag']]).toEqual([304, '', etag])

    // Another key of the bucket, then of the same node: this entry's ETag stays.
    await kv.put('etag.two', JSON.stringify({ plan: 'two@1' }))
    await vi.waitFor(async () => expect((await http('/v1/applied/etag/two')).status).toBe(200), { timeout: 10_000, interval: 50 })
    expect((await http(path, { headers: { 'if-none-match': etag } })).status).toBe(304)

    await kv.put('etag.one', JSON.stringify({ plan: 'one@2' }))
    const changed = await vi.waitFor(async () => {
      const got = await http(path, { headers: { 'if-none-match': etag } })
      expect(got.status, 'the entry to change').toBe(200)
      return got
    }, { timeout: 10_000, interval: 50 })
    expect(changed.headers['etag']).not.toBe(etag)
    expect(JSON.parse(changed.body)).toMatchObject({ key: 'etag.one', node: 'etag', module: 'one', value: { plan: 'one@2' } })

    await kv.delete('etag.one')
    await vi.waitFor(async () => expect((await http(path)).status).toBe(404), { timeout: 10_000, interval: 50 })
  })
})

describe('numbers and durations, read whole or not at all', () => {
  // Number() would have taken 0x10 as 16 and " 5 " as 5.
  test.each([
    ['limit=0x10', 'limit', 'limit: "0x10" will not do; it takes a whole number from 1 to 10000'],
    ['limit=%205%20', 'limit', 'limit: " 5 " will not do; it takes a whole number from 1 to 10000'],
    ['limit=1e1', 'limit', 'limit: "1e1" will not do; it takes a whole number from 1 to 10000'],
    ['wait=%205s', 'wait', 'wait: " 5s" will not do; it takes a duration of at most 60s, like 500ms, 5s or 30 (a bare number is seconds)'],
    ['wait=0x10', 'wait', 'wait: "0x10" will not do; it takes a duration of at most 60s, like 500ms, 5s or 30 (a bare number is seconds)']
  ])('GET /v1/needs?%s is 400 naming the parameter and what it takes', async (query, field, message) => {
    const got = await http(`/v1/needs?node=ace&${query}`, { headers: { 'if-none-match': '"x"' } })
    expect([got.status, got.body]).toEqual([400, refused('BAD_REQUEST', message, field)])
  })

  test('wait=.5 is half a second, as a bare number is seconds', async () => {
    const first = await http('/v1/needs?node=ace')
    const started = Date.now()
    const held = await http('/v1/needs?node=ace&wait=.5', { headers: { 'if-none-match': first.headers['etag'] as string } })
    expect(held.status).toBe(304)
    expect(Date.now() - started).toBeGreaterThanOrEqual(450)
  })
})

describe('every status its own code', () => {
  test.each([
    ['DELETE', '/v1/needs', { 'content-type': 'application/json' }, undefined],
    ['POST', '/v1/needs', { 'content-type': 'application/xml' }, '<needs/>'],
    ['POST', '/v1/registry', { 'content-type': 'application/json' }, '{"broken'],
    ['PUT', '/v1/applied/ace/gitea', { 'content-type': 'application/json' }, '{}'],
    ['PATCH', '/v1/collect/ace/environment/gitea', {}, undefined],
    ['POST', '/v1/needs', { 'content-type': 'application/json' }, 'x'.repeat(2 * 1024 * 1024)],
    ['OPTIONS', '/v1/needs', { 'content-type': 'text/csv' }, 'a,b'],
    ['DELETE', '/healthz', {}, undefined]
  ])('%s %s (%j) is 405 METHOD_NOT_ALLOWED with Allow, whatever its body', async (method, path, headers, body) => {
    const got = await http(path, { method, headers, ...(body === undefined ? {} : { body }) })
    expect([got.status, got.headers['allow'], got.headers['content-type'], got.body]).toEqual([405, 'GET, HEAD', JSON_TYPE,
      refused('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}: the gateway only reads; use GET or HEAD`)])
  })

  test('counts refusals on /metrics by their own code', async () => {
    const before = await counted('unmatched', 'METHOD_NOT_ALLOWED')
    await http('/v1/needs', { method: 'DELETE' })
    expect(await counted('unmatched', 'METHOD_NOT_ALLOWED')).toBe(before + 1)
    const headers = await counted('unmatched', 'HEADERS_TOO_LARGE')
    await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
    expect(await counted('unmatched', 'HEADERS_TOO_LARGE')).toBe(headers + 1)
  })

  test.each([
    [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, '431 Request Header Fields Too Large',
      refused('HEADERS_TOO_LARGE', 'the request\'s headers are larger than the gateway takes (16 KiB in all); send fewer or shorter headers')],
    ['NOT HTTP AT ALL\r\n\r\n', '400 Bad Request',
      refused('BAD_REQUEST', 'the request is not HTTP/1.1 the gateway can read; send a well-formed request line and headers')]
  ])('Node\'s own refusal is in the service\'s error body: %#', async (text, status, body) => {
    const got = await raw(text)
    expect(got.head.split('\r\n')).toEqual([`HTTP/1.1 ${status}`, `Content-Length: ${body.length}`, `Content-Type: ${JSON_TYPE}`, 'Cache-Control: no-store', 'Connection: close'])
    expect(got.body).toBe(body)
  })

  test('a 404 quotes a bounded part of a long path', async () => {
    const path = `/v1/${'x'.repeat(10_000)}`
    const got = await http(path)
    expect([got.status, got.body]).toEqual([404, refused('NOT_FOUND', `no route serves GET ${path.slice(0, 200)}... (10004 characters); the routes are listed in /openapi.json and shown at /docs`)])
  })

  test('a broken %-escape is 400 quoting a bounded part of the path, never the query', async () => {
    const path = `/v1/registry/%E0%A4%A${'x'.repeat(500)}`
    const got = await http(`${path}?access_token=secret-token`)
    expect([got.status, got.body]).toEqual([400, refused('BAD_REQUEST', `${path.slice(0, 200)}... (${path.length} characters) is not a valid URL path: a %-escape is broken; escape reserved characters completely, like %2F for /`)])
  })

  test('a broken %-escape in a query value is 400 naming the parameter, as in a path, never quoting the value', async () => {
    const message = (name: string) => `${name}: a %-escape in its value is broken; escape reserved characters completely (two hex digits of UTF-8 each, like %3A for :)`
    for (const [path, name] of [['/v1/collect?node=ace&collection=shell%3', 'collection'], ['/v1/needs?node=%C3%28', 'node'], ['/v1/needs/events?access_token=sec%ZZret', 'access_token']] as const) {
      const got = await http(path)
      expect([got.status, got.body], path).toEqual([400, refused('BAD_REQUEST', message(name), name)])
    }
    expect(JSON.parse((await http('/v1/collect?collection=shell%3Azsh')).body)).toMatchObject({ what: 'collect' })
  })

  test('a raw # in the request line is refused 400 naming it, never read as a query separator', async () => {
    const got = await raw('GET /v1/needs#node=ace HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    expect(got.head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/)
    expect(got.body).toBe(refused('BAD_REQUEST', 'the request line holds a raw "#": a fragment is never sent, and no parameter starts after it; write the query after "?" and escape a # inside a value as %23'))
    const escaped = await http('/v1/collect?collection=a%23b')
    expect(JSON.parse(escaped.body)).toMatchObject({ what: 'collect', total: 0 })
  })
})

describe('keys longer than 1024 bytes', () => {
  test('are handed out as next and taken back as after, on both faces', async () => {
    const kv = await nc.jetstream().views.kv('mesh-provisioner_needs')
    const long = `longkeys.gitea.secret.${'a'.repeat(3000)}`
    await kv.put(long, JSON.stringify({ long: true }))
    await kv.put('longkeys.gitea.secret.b', JSON.stringify({ long: false }))
    await vi.waitFor(async () => expect(JSON.parse((await verb({ what: 'needs', node: 'longkeys' })).body)).toMatchObject({ total: 2 }), { timeout: 10_000, interval: 50 })

    const first = JSON.parse((await verb({ what: 'needs', node: 'longkeys', limit: 1 })).body) as { next: string }
    expect(first.next).toBe(long)
    const rest = await verb({ what: 'needs', node: 'longkeys', after: first.next })
    expect(rest.code).toBeUndefined()
    expect(JSON.parse(rest.body)).toMatchObject({ entries: [{ key: 'longkeys.gitea.secret.b' }] })

    const page = JSON.parse((await http('/v1/needs?node=longkeys&limit=1')).body) as { next: string }
    expect(page.next).toBe(long)
    const got = await http(`/v1/needs?node=longkeys&after=${encodeURIComponent(page.next)}`)
    expect([got.status, got.body]).toEqual([200, rest.body])
  })
})

describe('answers never read', () => {
  test('a connection pipelining pages it never reads is cut past its bound, and what they held is let go', async () => {
    const needs = await nc.jetstream().views.kv('mesh-provisioner_needs')
    const fill = JSON.stringify({ fill: 'x'.repeat(1000) })
    const entries = 1500
    for (let i = 0; i < entries; i += 100) await Promise.all(Array.from({ length: 100 }, async (_, j) => await needs.put(`piped.m${String(i + j).padStart(4, '0')}.secret.k`, fill)))
    await vi.waitFor(async () => { expect(JSON.parse((await http('/v1/needs?node=piped&limit=1')).body).total).toBe(entries) }, { timeout: 10_000, interval: 50 })
    const { hostname, port } = new URL(running.url)
    const socket = connect(Number(port), hostname)
    let got = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => { got += chunk })
    socket.on('error', () => {})
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    // Distinct pages of about 1 MB each, asked at once: more than one connection may hold unsent.
    // They are built before the client can read one: kept, they would be held for good by a client
    // that never reads; the connection is cut instead.
    const pages = Math.ceil(2 * PER_CONNECTION_BYTES / 1_000_000)
    socket.write(Array.from({ length: pages }, (_, i) => `GET /v1/needs?node=piped&after=piped.m${String(i).padStart(4, '0')}.secret.k HTTP/1.1\r\nHost: x\r\n\r\n`).join(''))
    await closed
    expect(running.app.unsentBytes()).toBe(0)
    expect(got.split('HTTP/1.1 200 OK').length - 1).toBeLessThan(pages)
    expect((await http('/healthz')).status).toBe(200)
  })
})
