// Who may read the gateway (docs/access.md) through real HTTP against a real nats-server: every refusal
// with its status and body, node scoping on lists and one-entry routes, /metrics for the scraper,
// the open routes and the CORS preflight, security headers, and the tokens read again.

import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import type { NatsConnection } from 'nats'
import { Type } from 'typebox'
import { checkInjected, request } from './support/http.js'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { registerAccess } from '../src/http/access.js'
import { ErrorBody } from '../src/http/schemas.js'
import { newToken, parseTokens, type TokenEntry } from '../src/settings/tokens-file.js'
import type { RefusalReason } from '../src/metrics.js'
import type { Running } from '../src/service.js'
import { seedSampleMesh } from '../testkit/sample-mesh.js'
import { suiteFixture, untilReady } from './support/service.js'
import { isSynced, openStream, untilEvent, type SseStream } from './support/sse.js'

const CONSOLE_ORIGIN = 'https://console.example'
const made = {
  console: newToken('console', '*', false),
  scraper: newToken('scraper', '*', true),
  ace: newToken('ace', ['ace'], false),
  pair: newToken('pair', ['ace', 'g14'], false)
}
const bearer = (who: keyof typeof made | string): Record<string, string> => ({ authorization: `Bearer ${who in made ? made[who as keyof typeof made].token : who}` })
const tokensFile = (entries: TokenEntry[]): string => JSON.stringify({ tokens: entries })

interface Got { status: number, headers: Record<string, string | string[] | undefined>, body: string }

let nc: NatsConnection
let running: Running
let dir: string
let file: string

async function get (path: string, headers: Record<string, string> = {}, method: 'GET' | 'OPTIONS' | 'HEAD' = 'GET'): Promise<Got> {
  const res = await request(`${running.url}${path}`, { method, headers })
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() }
}

const error = (code: string, message: string): string => JSON.stringify({ error: { code, message } })
const MISSING = 'this route takes a bearer token: send Authorization: Bearer <token>'
const UNKNOWN = 'the bearer token is not one the gateway knows; ask the operator for one (npm run token makes it)'

const fx = suiteFixture()

beforeAll(async () => {
  const server = await fx.server()
  nc = await fx.admin(server)
  await seedSampleMesh(nc)
  dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-access-'))
  file = join(dir, 'tokens.json')
  await writeFile(file, tokensFile(Object.values(made).map((m) => m.entry)))
  running = await fx.service(server, { HTTP_TOKENS_FILE: file, CORS_ORIGINS: CONSOLE_ORIGIN })
  await untilReady(running)
  await vi.waitFor(() => { expect(running.views.status().registry.keys, 'the registry written and seen').toBeGreaterThan(0) }, { timeout: 10_000, interval: 20 })
})

const PROTECTED = ['/v1/registry', '/v1/registry/secret', '/v1/needs', '/v1/applied?node=ace', '/v1/collect', '/metrics']

describe('no token, or one the gateway does not know: 401', () => {
  test.each(PROTECTED)('%s without a token', async (path) => {
    const got = await get(path)
    expect(got.status).toBe(401)
    expect(got.headers['www-authenticate']).toBe('Bearer realm="mesh-provisioner"')
    expect(got.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(got.body).toBe(error('UNAUTHORIZED', MISSING))
  })

  test.each([
    ['an unknown token', bearer('not-a-token'), UNKNOWN],
    ['the stored digest itself', bearer(made.console.entry.sha256), UNKNOWN],
    ['another scheme', { authorization: `Basic ${Buffer.from(`x:${made.console.token}`).toString('base64')}` }, MISSING],
    ['an empty bearer', { authorization: 'Bearer ' }, MISSING]
  ])('%s', async (_what, headers, message) => {
    const got = await get('/v1/needs', headers)
    expect(got.status).toBe(401)
    expect(got.headers['www-authenticate']).toBe('Bearer realm="mesh-provisioner"')
    expect(got.body).toBe(error('UNAUTHORIZED', message))
  })

  test('takes no access_token in the query of a route other than the events', async () => {
    const got = await get(`/v1/needs?access_token=${made.console.token}`)
    expect(got.status).toBe(401)
    expect(got.body).toBe(error('UNAUTHORIZED', MISSING))
  })

  test('comes before the input is judged, so that it says nothing of the parameters', async () => {
    expect((await get('/v1/needs?colour=red')).status).toBe(401)
  })
})

describe('a token reads what its nodes allow', () => {
  test('reads every route with nodes "*"', async () => {
    for (const path of PROTECTED.filter((p) => p !== '/metrics')) expect((await get(path, bearer('console'))).status).toBe(200)
  })

  test.each(['/v1/registry', '/v1/registry?kind=secret', '/v1/registry/secret', '/v1/registry/facets?by=kind'])('the registry is read by every token: %s', async (path) => {
    const got = await get(path, bearer('ace'))
    expect(got.status).toBe(200)
    expect(got.body).toBe((await get(path, bearer('console'))).body)
  })

  test('the registry\'s event stream is followed by every token, as the console\'s token follows it', async () => {
    const own = await openStream(`${running.url}/v1/registry/events?access_token=${made.ace.token}`)
    const all = await openStream(`${running.url}/v1/registry/events?access_token=${made.console.token}`)
    expect([own.status, all.status]).toEqual([200, 200])
    const at = await untilEvent(own, isSynced)
    await untilEvent(all, isSynced)
    expect(own.events.slice(0, at + 1).filter((e) => e.event === 'put').length, 'the registry\'s entries').toBeGreaterThan(0)
    expect(own.events.slice(0, at + 1)).toEqual(all.events.slice(0, at + 1))
  })

  test.each(['/v1/needs?node=ace', '/v1/applied?node=ace', '/v1/collect?node=ace', '/v1/needs?node=ace&module=gitea'])('a scoped token reads its node: %s', async (path) => {
    const got = await get(path, bearer('ace'))
    expect(got.status).toBe(200)
    expect(got.body).toBe((await get(path, bearer('console'))).body)
  })

  test.each([
    ['ace', '/v1/applied?node=g14', 'this token reads the registry and node ace only, not node g14'],
    ['ace', '/v1/collect?node=ace&node=g14', 'this token reads the registry and node ace only, not node g14'],
    ['ace', '/v1/needs?node=g14&node=shanks&module=gitea', 'this token reads the registry and node ace only, not node g14, shanks'],
    ['ace', '/v1/needs?node=&node=g14', 'this token reads the registry and node ace only, not node g14'],
    ['ace', '/v1/needs/events?node=g14', 'this token reads the registry and node ace only, not node g14'],
    ['pair', '/v1/needs?node=shanks', 'this token reads the registry and node ace, g14 only, not node shanks'],
    ['pair', '/v1/applied?node=ace&node=novox&since=1-1', 'this token reads the registry and node ace, g14 only, not node novox'],
    ['console', '/metrics', 'this token does not read /metrics; the scraper\'s token has "metrics": true in the tokens file'],
    ['ace', '/metrics', 'this token does not read /metrics; the scraper\'s token has "metrics": true in the tokens file']
  ])('%s on %s: 403 naming what it may read', async (who, path, message) => {
    const got = await get(path, bearer(who))
    expect(got.status).toBe(403)
    expect(got.headers['www-authenticate']).toBeUndefined()
    expect(got.body).toBe(error('FORBIDDEN', message))
  })

  const ONE_ENTRY = ['/v1/needs/ace/gitea/secret/db-password', '/v1/applied/ace/gitea', '/v1/collect/ace/shell%3Azsh%3Anormal/gitea']

  test.each(ONE_ENTRY)('a scoped token reads its node\'s one-entry route %s', async (path) => {
    const got = await get(path, bearer('ace'))
    expect(got.status).toBe(200)
    expect(got.body).toBe((await get(path, bearer('console'))).body)
  })

  test.each(ONE_ENTRY.map((p) => p.replace('/ace/', '/g14/')))('a scoped token is refused another node\'s one-entry route %s', async (path) => {
    const got = await get(path, bearer('ace'))
    expect([got.status, got.body]).toEqual([403, error('FORBIDDEN', 'this token reads the registry and node ace only, not node g14')])
    expect((await get(path, bearer('pair'))).status).toBe(200)
  })

  test('reads another of its nodes', async () => {
    expect((await get('/v1/needs?node=g14', bearer('pair'))).status).toBe(200)
  })

  test('/metrics is the scraper\'s, and counts refusals by reason, never by token', async () => {
    const before = await get('/metrics', bearer('scraper'))
    expect(before.status).toBe(200)
    const count = (text: string, reason: RefusalReason): number => Number(new RegExp(`^mesh_provisioner_http_refused_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0)
    await get('/v1/needs')
    await get('/v1/needs', bearer('nope'))
    await get('/v1/needs?node=g14', bearer('ace'))
    const after = (await get('/metrics', bearer('scraper'))).body
    for (const reason of ['missing', 'unknown', 'forbidden'] as const) expect(count(after, reason)).toBe(count(before.body, reason) + 1)
    const refusals = after.split('\n').filter((l) => l.startsWith('mesh_provisioner_http_refused_total{'))
    expect(refusals).toHaveLength(3)
    for (const line of refusals) expect(line).toMatch(/^mesh_provisioner_http_refused_total\{reason="(missing|unknown|forbidden)"\} \d+$/)
    for (const m of Object.values(made)) expect(after).not.toContain(m.token)
  })
})

describe('a token of some nodes that names none reads its own, as if it had named them all (docs/access.md)', () => {
  const OTHERS = ['novox', 'shanks']
  /** Every key an answer shows (entries, deletions and out-of-shape keys), or the node of each row of the mesh at a glance. */
  const keysIn = (body: string): string[] => {
    const a = JSON.parse(body) as { entries?: Array<{ key: string }>, deleted?: Array<{ key: string }>, outOfShape?: Array<{ key: string }> | number, nodes?: Array<{ node: string }>, modules?: Array<{ node: string }>, values?: Array<{ value: string }>, by?: string }
    if (a.nodes !== undefined || a.modules !== undefined) return [...a.nodes ?? [], ...a.modules ?? []].map((r) => r.node)
    if (a.values !== undefined) return a.by === 'node' ? a.values.map((v) => v.value) : ['ace']
    return [...a.entries ?? [], ...(a.deleted ?? []), ...(Array.isArray(a.outOfShape) ? a.outOfShape : [])].map((e) => e.key)
  }

  test.each([
    ['/v1/needs', '/v1/needs?node=ace&node=g14'],
    ['/v1/needs?node=', '/v1/needs?node=ace&node=g14'],
    ['/v1/needs?module=gitea&limit=3', '/v1/needs?node=g14&node=ace&module=gitea&limit=3'],
    ['/v1/needs?after=ace.mail.secret.db-password&limit=5', '/v1/needs?node=ace&node=g14&after=ace.mail.secret.db-password&limit=5'],
    ['/v1/applied', '/v1/applied?node=ace&node=g14'],
    ['/v1/collect?collection=shell%3Azsh%3Anormal', '/v1/collect?node=ace&node=g14&collection=shell%3Azsh%3Anormal'],
    ['/v1/collect?contributor=gitea', '/v1/collect?contributor=gitea&node=ace&node=g14'],
    ['/v1/needs/facets?by=node', '/v1/needs/facets?by=node&node=ace&node=g14'],
    ['/v1/collect/facets?by=collection', '/v1/collect/facets?by=collection&node=ace&node=g14'],
    ['/v1/applied/facets?by=module', '/v1/applied/facets?by=module&node=ace&node=g14'],
    ['/v1/nodes', '/v1/nodes?node=ace&node=g14'],
    ['/v1/modules', '/v1/modules?node=ace&node=g14'],
    ['/v1/modules?state=applied&state=pending', '/v1/modules?state=applied&state=pending&node=ace&node=g14']
  ])('GET %s answers byte for byte %s with the nodes named, ETag included', async (path, named) => {
    const [own, asked] = await Promise.all([get(path, bearer('pair')), get(named, bearer('console'))])
    expect([own.status, own.body, own.headers['etag']]).toEqual([200, asked.body, asked.headers['etag']])
    expect(keysIn(own.body).length).toBeGreaterThan(0)
    for (const key of keysIn(own.body)) expect(key, 'no key of another node').toMatch(/^(ace|g14)(\.|$)/)
    // The console's answer to the same URL is not the scoped one, nor is the scoped one kept for it.
    const all = await get(path, bearer('console'))
    expect(all.body).not.toBe(own.body)
    expect((await get(path, bearer('pair'))).body).toBe(own.body)
  })

  test('never shows another node: not its out-of-shape keys (one with no node of the token\'s as its first token included), deletions, counts or changes', async () => {
    const kv = await nc.jetstream().views.kv('mesh-provisioner_needs')
    const { cursor } = JSON.parse((await get('/v1/needs', bearer('ace'))).body) as { cursor: string }
    const writes = [
      await kv.put('lonely', '{}'), // one token, which is no node the token reads
      await kv.put('ace', '{}'), // one token: ace's
      await kv.put('g14.gitea.secret.across', '{}'),
      await kv.put('ace.gitea.secret.mine', '{}')
    ]
    await kv.delete('g14.gitea.secret.across')
    await kv.delete('ace.gitea.secret.mine')
    const last = await kv.put('shanks.mail.secret.across', '{}')
    await vi.waitFor(() => { expect(running.views.status().needs.revision).toBeGreaterThanOrEqual(last) }, { timeout: 5000, interval: 10 })
    expect(writes).toHaveLength(4)

    const list = await get('/v1/needs', bearer('ace'))
    const named = await get('/v1/needs?node=ace', bearer('console'))
    expect(list.body).toBe(named.body)
    const answer = JSON.parse(list.body) as { total: number, outOfShape: Array<{ key: string }> }
    expect(answer.outOfShape.map((o) => o.key)).toEqual(['ace', 'ace.gitea'])
    expect((JSON.parse((await get('/v1/needs', bearer('console'))).body) as { outOfShape: Array<{ key: string }> }).outOfShape.map((o) => o.key)).toContain('lonely')
    for (const key of keysIn(list.body)) expect(key).toMatch(/^ace(\.|$)/)

    const since = await get(`/v1/needs?since=${cursor}`, bearer('ace'))
    expect(since.body).toBe((await get(`/v1/needs?since=${cursor}&node=ace`, bearer('console'))).body)
    expect(keysIn(since.body).sort()).toEqual(['ace', 'ace.gitea.secret.mine'])
    for (const other of OTHERS) expect(since.body).not.toContain(other)
    expect(since.body).not.toContain('g14')
    expect(since.body).not.toContain('lonely')
    await kv.delete('lonely')
    await kv.delete('ace')
  })

  test('follows its own nodes on an event stream without node, as the stream naming them does: another node\'s puts, out-of-shape keys and deletions are not in it', async () => {
    const kv = await nc.jetstream().views.kv('mesh-provisioner_applied')
    const own = await openStream(`${running.url}/v1/applied/events?access_token=${made.pair.token}`)
    const named = await openStream(`${running.url}/v1/applied/events?node=ace&node=g14&access_token=${made.console.token}`)
    const all = await openStream(`${running.url}/v1/applied/events?access_token=${made.console.token}`)
    expect([own.status, named.status, all.status]).toEqual([200, 200, 200])
    for (const stream of [own, named, all]) await untilEvent(stream, isSynced)
    await kv.put('novox.across', '{}')
    await kv.put('novox.x.y', '{}') // out of shape: applied keys are <node>.<module>
    await kv.delete('shanks.gitea')
    await kv.put('g14.stream-seen', '{}')
    const at = await untilEvent(own, (e) => e.event === 'put' && e.data.includes('g14.stream-seen'))
    await untilEvent(named, (e) => e.event === 'put' && e.data.includes('g14.stream-seen'))
    // The console's stream of every node shows the three after its snapshot, before the write both others wait on.
    const seen = await untilEvent(all, (e) => e.event === 'put' && e.data.includes('g14.stream-seen'))
    expect(all.events.slice(all.events.findIndex(isSynced), seen).filter((e) => ['novox.across', 'novox.x.y', 'shanks.gitea'].includes((JSON.parse(e.data) as { key?: string }).key ?? '')).map((e) => e.event)).toEqual(['put', 'outOfShape', 'delete'])
    expect(own.events.slice(0, at + 1)).toEqual(named.events.slice(0, at + 1))
    for (const e of own.events) {
      expect(e.data).not.toContain('novox')
      expect(e.data).not.toContain('shanks')
    }
    await kv.delete('novox.x.y')
    await kv.put('shanks.gitea', '{}')
  })

  test.each(['nodes', 'modules'])('follows the %s rows of its own nodes live without node, as the stream naming them does, and is 403 naming another node', async (what) => {
    const kv = await nc.jetstream().views.kv('mesh-provisioner_applied')
    const own = await openStream(`${running.url}/v1/${what}/events?access_token=${made.pair.token}`, { origin: CONSOLE_ORIGIN })
    const named = await openStream(`${running.url}/v1/${what}/events?node=ace&node=g14&access_token=${made.console.token}`)
    const all = await openStream(`${running.url}/v1/${what}/events?access_token=${made.console.token}`)
    expect([own.status, named.status, all.status]).toEqual([200, 200, 200])
    // A console on another origin reads it, as it reads the bucket streams.
    expect(own.headers['access-control-allow-origin']).toBe(CONSOLE_ORIGIN)
    const starts = await Promise.all([own, named, all].map(async (s) => await untilEvent(s, isSynced)))
    expect(own.events.slice(0, (starts[0] as number) + 1)).toEqual(named.events.slice(0, (starts[1] as number) + 1))
    await kv.put(`novox.live-${what}`, '{}')
    await untilEvent(all, (e) => e.event === 'put' && e.data.includes('"novox"'), starts[2])
    await kv.put(`g14.live-${what}`, '{}')
    const at = await untilEvent(own, (e) => e.event === 'put' && e.data.includes('"g14"'), starts[0])
    await untilEvent(named, (e) => e.event === 'put' && e.data.includes('"g14"'), starts[1])
    expect(own.events.slice(0, at + 1).map((e) => e.data)).toEqual(named.events.slice(0, at + 1).map((e) => e.data))
    for (const e of own.events) {
      expect(e.data).not.toContain('novox')
      expect(e.data).not.toContain('shanks')
    }
    const refused = await get(`/v1/${what}/events?node=novox`, bearer('pair'))
    expect(refused.status).toBe(403)
    expect(JSON.parse(refused.body).error.code).toBe('FORBIDDEN')
    expect((await get(`/v1/${what}/events`)).status).toBe(401)
    await kv.delete(`novox.live-${what}`)
    await kv.delete(`g14.live-${what}`)
  })

  test('a held wait naming no node stays held through another node\'s write and answers one of its own, as naming its nodes would (needs, nodes, modules)', async () => {
    const needs = await nc.jetstream().views.kv('mesh-provisioner_needs')
    const seen = async (revision: number): Promise<void> => {
      await vi.waitFor(() => { expect(running.views.status().needs.revision).toBeGreaterThanOrEqual(revision) }, { timeout: 5000, interval: 10 })
    }
    const PATHS = ['/v1/needs', '/v1/nodes', '/v1/modules']
    const hold = async (path: string, wait: string): Promise<{ etag: string, held: Promise<Got> }> => {
      const etag = (await get(path, bearer('pair'))).headers['etag'] as string
      return { etag, held: get(`${path}?wait=${wait}`, { ...bearer('pair'), 'if-none-match': etag }) }
    }

    const ending = await Promise.all(PATHS.map(async (path) => await hold(path, '1s')))
    await seen(await needs.put('shanks.across.secret.held', '{}'))
    const ended = await Promise.all(ending.map(async ({ held }) => await held))
    expect(ended.map((e, i) => [PATHS[i], e.status, e.headers['etag']]), 'a write on shanks leaves each held to the end').toEqual(ending.map(({ etag }, i) => [PATHS[i], 304, etag]))

    const answering = await Promise.all(PATHS.map(async (path) => await hold(path, '10s')))
    await seen(await needs.put('novox.across.secret.held', '{}'))
    await needs.put('g14.held.secret.mine', '{}')
    for (const [i, { held }] of answering.entries()) {
      const answer = await held
      const named = await get(`${PATHS[i] as string}?node=ace&node=g14`, bearer('console'))
      expect([answer.status, answer.body, answer.headers['etag']]).toEqual([200, named.body, named.headers['etag']])
      expect(answer.body).toContain('g14')
      expect(answer.body).not.toMatch(/novox|shanks/)
    }
    expect(JSON.parse((await answering[2]?.held as Got).body).modules).toContainEqual(expect.objectContaining({ node: 'g14', module: 'held', state: 'unapplied' }))
    for (const key of ['shanks.across.secret.held', 'novox.across.secret.held', 'g14.held.secret.mine']) await needs.delete(key)
  })

  test.each(['/v1/needs/g14/gitea/secret/db-password', '/v1/applied/shanks/gitea', '/v1/collect/novox/environment/gitea', '/v1/nodes/g14', '/v1/modules/shanks/gitea', '/v1/nodes?node=novox', '/v1/needs/facets?by=kind&node=g14'])('reading across on %s stays 403, naming only its own nodes', async (path) => {
    const got = await get(path, bearer('ace'))
    expect(got.status).toBe(403)
    const node = /node=([^&]+)/.exec(path)?.[1] ?? path.split('/')[3] as string
    expect(JSON.parse(got.body)).toEqual({ error: { code: 'FORBIDDEN', message: `this token reads the registry and node ace only, not node ${node}` } })
  })
})

describe('GET /v1/token/self', () => {
  test.each([
    ['ace', { name: 'ace', nodes: ['ace'], metrics: false }],
    ['pair', { name: 'pair', nodes: ['ace', 'g14'], metrics: false }],
    ['console', { name: 'console', nodes: '*', metrics: false }],
    ['scraper', { name: 'scraper', nodes: '*', metrics: true }]
  ] as const)('%s', async (who, self) => {
    const got = await get('/v1/token/self', bearer(who))
    expect([got.status, got.headers['content-type'], got.body]).toEqual([200, 'application/json; charset=utf-8', JSON.stringify(self)])
    expect(got.body).not.toContain(made[who].entry.sha256)
  })

  test('is 401 without a token or with one the gateway does not know', async () => {
    expect([(await get('/v1/token/self')).status, (await get('/v1/token/self', bearer('nope'))).status]).toEqual([401, 401])
  })

  test.each(['foo=1', 'node=ace', 'wait=5s'])('takes no parameter: ?%s is 400 naming it', async (query) => {
    const got = await get(`/v1/token/self?${query}`, bearer('ace'))
    const name = query.split('=')[0] as string
    expect([got.status, JSON.parse(got.body)]).toEqual([400, { error: { code: 'BAD_REQUEST', message: `"${name}" is not a parameter of GET /v1/token/self; it takes none`, field: name } }])
  })
})

describe('open to everyone', () => {
  test.each(['/healthz', '/readyz', '/openapi.json', '/asyncapi.json', '/docs', '/docs/static/swagger-initializer.js', '/docs/static/swagger-ui.css', '/', '/page/main.js', '/page/page.css'])('%s', async (path) => {
    const got = await get(path)
    expect(got.status).toBe(200)
  })

  test('a CORS preflight, and the refusal carries the CORS headers the console needs to read it', async () => {
    const preflight = await get('/v1/needs?node=ace', { origin: CONSOLE_ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' }, 'OPTIONS')
    expect(preflight.status).toBe(204)
    expect(preflight.headers['access-control-allow-origin']).toBe(CONSOLE_ORIGIN)
    expect(preflight.headers['access-control-allow-headers']).toBe('authorization')
    const refused = await get('/v1/needs?node=ace', { origin: CONSOLE_ORIGIN })
    expect(refused.status).toBe(401)
    expect(refused.headers['access-control-allow-origin']).toBe(CONSOLE_ORIGIN)
  })
})

test.each([
  ['/v1/needs?node=ace', bearer('console'), 200],
  ['/v1/needs', {}, 401],
  ['/nowhere', {}, 404],
  ['/docs/static/swagger-ui.css', {}, 200]
] as const)('security headers on every answer: %s', async (path, headers, status) => {
  const got = await get(path, headers)
  expect(got.status).toBe(status)
  expect(got.headers['x-content-type-options']).toBe('nosniff')
  expect(got.headers['x-frame-options']).toBe('SAMEORIGIN')
  expect(got.headers['content-security-policy']).toMatch(/default-src 'self';.*script-src 'self';/)
  expect(got.headers['content-security-policy']).not.toContain('upgrade-insecure-requests')
  expect(got.headers['strict-transport-security']).toBeUndefined()
})

describe('the tokens read again', () => {
  test('a new file replaces the tokens; a malformed one leaves them as they were', async () => {
    const fresh = newToken('fresh', ['g14'], false)
    await writeFile(file, tokensFile([made.console.entry, fresh.entry]))
    running.reload()
    expect((await get('/v1/needs?node=g14', bearer(fresh.token))).status).toBe(200)
    expect((await get('/v1/needs?node=ace', bearer('ace'))).status).toBe(401)

    await writeFile(file, tokensFile([made.console.entry, { ...made.ace.entry, nodes: [] }]))
    running.reload()
    expect((await get('/v1/needs?node=g14', bearer(fresh.token))).status).toBe(200)
    expect((await get('/v1/needs?node=ace', bearer('ace'))).status).toBe(401)

    await writeFile(file, tokensFile(Object.values(made).map((m) => m.entry)))
    running.reload()
    expect((await get('/v1/needs?node=ace', bearer('ace'))).status).toBe(200)
  })

  test('ends the event streams whose token is taken away or no longer reads what they follow, and no other', async () => {
    const follow = async (query: string, who: keyof typeof made): Promise<SseStream> => {
      const stream = await openStream(`${running.url}/v1/needs/events?${query}&access_token=${made[who].token}`)
      expect(stream.status).toBe(200)
      await untilEvent(stream, isSynced)
      return stream
    }
    const aceStream = await follow('node=ace', 'ace')
    const consoleStream = await follow('node=ace', 'console')
    const narrowed = newToken('narrowed', ['ace', 'g14'], false)
    await writeFile(file, tokensFile([...Object.values(made).map((m) => m.entry), narrowed.entry]))
    running.reload()
    const g14Stream = await openStream(`${running.url}/v1/needs/events?node=g14&access_token=${narrowed.token}`)
    await untilEvent(g14Stream, isSynced)

    // ace's token goes, and the narrowed token no longer reads g14; the console's stays as it was.
    await writeFile(file, tokensFile([made.console.entry, { ...narrowed.entry, nodes: ['ace'] }]))
    running.reload()
    await aceStream.ended
    await g14Stream.ended
    const open = await Promise.race([consoleStream.ended.then(() => 'ended'), new Promise((resolve) => setImmediate(() => resolve('open')))])
    expect(open).toBe('open')
    expect((await get('/v1/needs/events?node=ace', bearer('ace'))).status).toBe(401)

    await writeFile(file, tokensFile(Object.values(made).map((m) => m.entry)))
    running.reload()
  })
})

describe('routes added later are checked too (the events and one-entry routes)', () => {
  const tokens = parseTokens(tokensFile([made.console.entry, made.ace.entry]), 'tokens.json')
  const app = Fastify({ ajv: { customOptions: { removeAdditional: false } } })
  app.addSchema(ErrorBody)
  const strict = Type.Object({ node: Type.Optional(Type.String()) }, { additionalProperties: false })
  registerAccess(app, { tokens: () => tokens, metrics: { refused: () => {} } })
  app.get('/v1/:what/events', { schema: { querystring: strict } }, async (request) => ({ query: request.query, token: request.tokenName }))
  // What it reads the route declares, whatever its URL or query: this one takes `node` and is still read whole by every token.
  app.get('/v1/registry/events', { config: { access: 'registry' }, schema: { querystring: strict } }, async (request) => ({ query: request.query, token: request.tokenName }))
  app.get('/v1/needs/:node/:module/:kind/:name', { schema: { querystring: Type.Object({}, { additionalProperties: false }) } }, async (request) => ({ token: request.tokenName }))
  afterAll(async () => await app.close())

  test.each([
    [`/v1/needs/events?node=ace&access_token=${made.ace.token}`, {}, 200, { query: { node: 'ace' }, token: 'ace' }],
    [`/v1/registry/events?access_token=${made.ace.token}`, {}, 200, { query: {}, token: 'ace' }],
    [`/v1/registry/events?node=g14&access_token=${made.ace.token}`, {}, 200, { query: { node: 'g14' }, token: 'ace' }],
    ['/v1/needs/events?node=ace', bearer('ace'), 200, { query: { node: 'ace' }, token: 'ace' }],
    [`/v1/needs/events?access_token=${made.console.token}`, {}, 200, { query: {}, token: 'console' }],
    [`/v1/needs/events?node=g14&access_token=${made.ace.token}`, {}, 403, undefined],
    // Given its nodes before the query is judged (this route's validator makes a list of one its value).
    [`/v1/needs/events?access_token=${made.ace.token}`, {}, 200, { query: { node: 'ace' }, token: 'ace' }],
    ['/v1/needs/events?access_token=nope', {}, 401, undefined],
    ['/v1/needs/events', {}, 401, undefined],
    ['/v1/needs/ace/gitea/secret/db-password', bearer('ace'), 200, { token: 'ace' }],
    ['/v1/needs/g14/gitea/secret/db-password', bearer('ace'), 403, undefined],
    ['/v1/needs/g14/gitea/secret/db-password?node=ace', bearer('ace'), 403, undefined],
    ['/v1/needs/g14/gitea/secret/db-password', {}, 401, undefined]
  ])('%s', async (url, headers, status, body) => {
    const got = await app.inject({ url, headers })
    // The stub routes' 200s are no answers of the gateway; the refusals are the access plugin's own.
    if (got.statusCode >= 400) await checkInjected('GET', url, got)
    expect(got.statusCode).toBe(status)
    if (body !== undefined) expect(got.json()).toEqual(body)
  })

  test('the events route names access_token in its refusal', async () => {
    expect((await checkInjected('GET', '/v1/needs/events', await app.inject({ url: '/v1/needs/events' }))).json()).toEqual({ error: { code: 'UNAUTHORIZED', message: `${MISSING} or access_token=<token> in the query` } })
  })
})
