// The REST gateway's wire contract through real HTTP against a real nats-server: every route and
// filter byte-equal to the verb, every refusal with its status and body, ETag/304, CORS, metrics.

import type { NatsConnection } from 'nats'
import { request } from './support/http.js'
import { beforeAll, describe, expect, test, vi } from 'vitest'
import type { Running } from '../src/service.js'
import type { NatsServer } from '../testkit/nats-server.js'
import { startSeeded, suiteFixture, untilReady, untilWritten, type Seeded } from './support/service.js'
import { requestVerb } from './support/verb.js'

const JSON_TYPE = 'application/json; charset=utf-8'

interface Got { status: number, headers: Record<string, string | string[] | undefined>, body: string }

async function http (base: string, path: string, opts: { method?: string, headers?: Record<string, string> } = {}): Promise<Got> {
  const res = await request(`${base}${path}`, { method: (opts.method ?? 'GET') as 'GET', headers: opts.headers ?? {} })
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() }
}

const fx = suiteFixture()
let seeded: Seeded
let server: NatsServer
let nc: NatsConnection
let running: Running
const get = async (path: string, headers?: Record<string, string>) => await http(running.url, path, headers === undefined ? {} : { headers })

/** The verb's reply to the same request, as text, with its error code header when refused. */
async function verb (payload: Record<string, unknown>): Promise<{ body: string, code: string | undefined }> {
  const msg = await requestVerb(nc, JSON.stringify(payload))
  return { body: new TextDecoder().decode(msg.data), code: msg.headers?.get('Nats-Service-Error-Code') || undefined }
}

beforeAll(async () => {
  seeded = await startSeeded(fx)
  server = seeded.server
  nc = seeded.nc
  running = seeded.running
  await untilWritten(running)
  await vi.waitFor(() => expect(running.views.status().registry.keys).toBeGreaterThan(0), { timeout: 10_000, interval: 50 })
})

describe('every route and filter answers what the verb answers', () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['/v1/registry', { what: 'registry' }],
    ['/v1/registry?kind=secret', { what: 'registry', kind: 'secret' }],
    ['/v1/registry?limit=2', { what: 'registry', limit: 2 }],
    ['/v1/needs', { what: 'needs' }],
    ['/v1/needs?node=ace', { what: 'needs', node: 'ace' }],
    ['/v1/needs?module=gitea', { what: 'needs', module: 'gitea' }],
    ['/v1/needs?kind=secret', { what: 'needs', kind: 'secret' }],
    ['/v1/needs?node=shanks&module=mail', { what: 'needs', node: 'shanks', module: 'mail' }],
    ['/v1/needs?node=ace&module=gitea&kind=port', { what: 'needs', node: 'ace', module: 'gitea', kind: 'port' }],
    ['/v1/needs?limit=3', { what: 'needs', limit: 3 }],
    ['/v1/needs?name=db-password', { what: 'needs', name: 'db-password' }],
    ['/v1/needs?node=&module=&kind=&name=&after=&limit=0', { what: 'needs', node: '', module: '', kind: '', name: '', after: '', collection: '', limit: 0 }],
    ['/v1/needs?node=ace&limit=', { what: 'needs', node: 'ace', limit: null }],
    ['/v1/applied?node=g14&kind=&collection=&contributor=', { what: 'applied', node: 'g14', kind: '', collection: '', contributor: '' }],
    ['/v1/needs?after=g14.gitea.secret.db-password&limit=5', { what: 'needs', after: 'g14.gitea.secret.db-password', limit: 5 }],
    ['/v1/applied', { what: 'applied' }],
    ['/v1/applied?node=g14', { what: 'applied', node: 'g14' }],
    ['/v1/applied?module=wireguard', { what: 'applied', module: 'wireguard' }],
    ['/v1/applied?node=ace&module=gitea', { what: 'applied', node: 'ace', module: 'gitea' }],
    ['/v1/collect', { what: 'collect' }],
    ['/v1/collect?node=shanks', { what: 'collect', node: 'shanks' }],
    ['/v1/collect?module=gitea', { what: 'collect', module: 'gitea' }],
    ['/v1/collect?contributor=gitea', { what: 'collect', contributor: 'gitea' }],
    ['/v1/collect?collection=shell%3Azsh%3Anormal', { what: 'collect', collection: 'shell:zsh:normal' }],
    ['/v1/collect?collection=contribution%3Aroute%3Dproxy&node=ace', { what: 'collect', collection: 'contribution:route=proxy', node: 'ace' }],
    ['/v1/collect?node=ace&collection=environment&module=gitea&limit=10', { what: 'collect', node: 'ace', collection: 'environment', module: 'gitea', limit: 10 }],
    // Several values: the parameter repeated, an array on the bus; a list of one is the value alone.
    ['/v1/needs?node=g14&node=ace', { what: 'needs', node: ['ace', 'g14'] }],
    ['/v1/needs?node=ace&node=shanks&module=mail&module=gitea&kind=secret', { what: 'needs', node: ['shanks', 'ace'], module: ['gitea', 'mail'], kind: 'secret' }],
    ['/v1/needs?node=ace&node=ace', { what: 'needs', node: ['ace'] }],
    ['/v1/needs?node=ace', { what: 'needs', node: ['ace'], module: [] }],
    ['/v1/applied?node=g14&node=novox&limit=5', { what: 'applied', node: ['g14', 'novox'], limit: 5 }],
    ['/v1/collect?collection=shell%3Azsh%3Anormal&collection=environment&contributor=gitea&node=ace&node=g14', { what: 'collect', collection: ['environment', 'shell:zsh:normal'], module: ['gitea'], node: ['ace', 'g14'] }],
    ['/v1/registry?kind=secret&kind=bound', { what: 'registry', kind: ['bound', 'secret'] }]
  ]

  test.each(cases)('GET %s', async (path, payload) => {
    const [got, bus] = await Promise.all([get(path), verb(payload)])
    expect(bus.code).toBeUndefined()
    expect(got.status).toBe(200)
    expect(got.headers['content-type']).toBe(JSON_TYPE)
    expect(got.body).toBe(bus.body)
    const answer = JSON.parse(got.body) as { what: string, total: number, entries: unknown[] }
    expect(answer.what).toBe(payload['what'])
    expect(answer.entries.length).toBeGreaterThan(0)
  })

  test('shows out-of-shape keys and values that are not JSON, as the verb does', async () => {
    const needs = JSON.parse((await get('/v1/needs?node=shanks&module=mail')).body) as { entries: Array<{ key: string, raw?: string, rawBase64?: string }>, outOfShape: unknown[] }
    expect(needs.entries.find((e) => e.key === 'shanks.mail.secret.dkim')?.raw).toBe('plain text, not JSON')
    expect(needs.entries.find((e) => e.key === 'shanks.mail.secret.blob')?.rawBase64).toBe('//4AAQ==')
    const applied = JSON.parse((await get('/v1/applied?node=g14')).body) as { outOfShape: Array<{ key: string }> }
    expect(applied.outOfShape.map((o) => o.key)).toEqual(['g14.wireguard.extra'])
  })

  test('cuts at limit and pages on with next', async () => {
    const first = JSON.parse((await get('/v1/needs?limit=100')).body) as { total: number, entries: Array<{ key: string }>, next: string, cut: { reason: string, omitted: number } }
    expect(first.entries).toHaveLength(100)
    expect(first.cut).toEqual({ reason: 'limit', omitted: first.total - 100 })
    const rest = JSON.parse((await get(`/v1/needs?after=${encodeURIComponent(first.next)}`)).body) as { entries: Array<{ key: string }>, cut?: unknown }
    expect(rest.cut).toBeUndefined()
    expect(rest.entries).toHaveLength(first.total - 100)
    expect((rest.entries[0]?.key ?? '') > first.next).toBe(true)
  })

  test('GET /v1/registry/{kind} answers the entry the list holds', async () => {
    const got = await get('/v1/registry/secret')
    expect(got.status).toBe(200)
    expect(got.headers['content-type']).toBe(JSON_TYPE)
    const list = JSON.parse((await verb({ what: 'registry', kind: 'secret' })).body) as { entries: unknown[] }
    expect(list.entries).toHaveLength(1)
    expect(got.body).toBe(JSON.stringify(list.entries[0]))
    expect(JSON.parse(got.body)).toMatchObject({ key: 'secret', kind: 'secret', value: { kind: 'secret', module: 'mesh-vault', verb: 'mesh-vault.secret' } })
  })
})

describe('refusals: status and body', () => {
  const refused = (code: string, message: string, field?: string) => JSON.stringify({ error: { code, message, ...(field === undefined ? {} : { field }) } })

  test.each([
    ['/v1/needs?limit=10001', { what: 'needs', limit: 10001 }],
    ['/v1/needs?limit=abc', { what: 'needs', limit: 'abc' }],
    ['/v1/needs?limit=1.5', { what: 'needs', limit: '1.5' }],
    ['/v1/needs?node=a%20b', { what: 'needs', node: 'a b' }],
    ['/v1/needs?collection=shell', { what: 'needs', collection: 'shell' }],
    ['/v1/applied?kind=secret', { what: 'applied', kind: 'secret' }],
    ['/v1/registry?node=ace', { what: 'registry', node: 'ace' }],
    ['/v1/collect?module=gitea&contributor=mail', { what: 'collect', module: 'gitea', contributor: 'mail' }],
    ['/v1/registry/a%20b', { what: 'registry', kind: 'a b' }]
  ])('GET %s is refused 400 with the words of the verb', async (path, payload) => {
    const [got, bus] = await Promise.all([get(path), verb(payload)])
    expect(bus.code).toBe('400')
    expect(got.status).toBe(400)
    expect(got.headers['content-type']).toBe(JSON_TYPE)
    expect(got.body).toBe(bus.body)
    expect(JSON.parse(got.body)).toMatchObject({ error: { code: 'BAD_REQUEST', field: expect.any(String) } })
  })

  test.each([
    ['/v1/needs?foo=1', refused('BAD_REQUEST', '"foo" is not a parameter of GET /v1/needs; it takes node, module, kind, name, after, limit, since, wait', 'foo')],
    ['/v1/needs?what=applied', refused('BAD_REQUEST', '"what" is not a parameter of GET /v1/needs; it takes node, module, kind, name, after, limit, since, wait', 'what')],
    ['/v1/collect?node=ace&extra=', refused('BAD_REQUEST', '"extra" is not a parameter of GET /v1/collect; it takes node, module, contributor, collection, after, limit, since, wait', 'extra')],
    ['/v1/registry/secret?kind=secret', refused('BAD_REQUEST', '"kind" is not a parameter of GET /v1/registry/:kind; it takes none', 'kind')],
    ['/v1/applied?constructor=x', refused('BAD_REQUEST', '"constructor" is not a parameter of GET /v1/applied; it takes node, module, after, limit, since, wait', 'constructor')],
    ['/v1/applied?__proto__=x', refused('BAD_REQUEST', '"__proto__" is not a parameter of GET /v1/applied; it takes node, module, after, limit, since, wait', '__proto__')],
    ['/v1/registry?toString=x', refused('BAD_REQUEST', '"toString" is not a parameter of GET /v1/registry; it takes kind, after, limit, since, wait', 'toString')],
    ['/v1/needs?node=a&node=', refused('BAD_REQUEST', 'node: ["a",""] will not do; it takes one key token of 1 to 256 of A-Z a-z 0-9 _ - / = (e.g. "n1"), or a list of such values (at most 100 distinct)', 'node')],
    [`/v1/needs?${Array.from({ length: 101 }, (_, i) => `node=n${i}`).join('&')}`, refused('BAD_REQUEST', 'node: 101 distinct values, more than one request takes; it takes at most 100: ask in several requests', 'node')]
  ])('GET %s is refused 400 naming the parameter', async (path, body) => {
    const got = await get(path)
    expect([got.status, got.headers['content-type'], got.body]).toEqual([400, JSON_TYPE, body])
  })

  test('404 for a kind no domain answers, and for an unknown route', async () => {
    const kind = await get('/v1/registry/colour')
    expect([kind.status, kind.headers['content-type'], kind.body]).toEqual([404, JSON_TYPE,
      refused('NOT_FOUND', 'bucket mesh-provisioner_registry holds no kind entry "colour"; ask the list (what=registry) to see what it holds')])
    const asset = await get('/docs/static/no-such-file.js')
    expect([asset.status, JSON.parse(asset.body).error.code]).toEqual([404, 'NOT_FOUND'])
    const route = await get('/v2/needs?node=ace')
    expect([route.status, route.headers['content-type'], route.body]).toEqual([404, JSON_TYPE,
      refused('NOT_FOUND', 'no route serves GET /v2/needs; the routes are listed in /openapi.json and shown at /docs')])
  })

  test.each([
    ['POST', '/v1/needs'],
    ['PUT', '/v1/registry/secret'],
    ['DELETE', '/v1/collect?node=ace'],
    ['PATCH', '/v1/applied'],
    ['OPTIONS', '/v1/registry'],
    ['POST', '/readyz']
  ])('%s %s is 405 with Allow', async (method, path) => {
    const got = await http(running.url, path, { method })
    const bare = path.split('?')[0] as string
    expect([got.status, got.headers['allow'], got.headers['content-type'], got.body]).toEqual([405, 'GET, HEAD', JSON_TYPE,
      refused('METHOD_NOT_ALLOWED', `${method} is not allowed on ${bare}: the gateway only reads; use GET or HEAD`)])
  })
})

test('GET /v1/token/self on a gateway without tokens: every node and /metrics, no name', async () => {
  const got = await get('/v1/token/self')
  expect([got.status, got.headers['content-type'], got.body]).toEqual([200, JSON_TYPE, '{"name":null,"nodes":"*","metrics":true}'])
})

describe('caching', () => {
  test('answers carry a strong ETag and no-cache; If-None-Match gets 304 until the answer changes, not when another node does', async () => {
    const path = '/v1/needs?node=novox&module=gitea'
    const first = await get(path)
    const etag = first.headers['etag'] as string
    expect(etag).toMatch(/^"\d+-c-[\w.-]+-\d+"$/)
    expect(first.headers['cache-control']).toBe('no-cache')
    expect((await get(path)).headers['etag']).toBe(etag)

    const same = await get(path, { 'if-none-match': etag })
    expect([same.status, same.body, same.headers['etag'], same.headers['cache-control']]).toEqual([304, '', etag, 'no-cache'])
    expect((await get(path, { 'if-none-match': `"other", W/${etag}` })).status).toBe(304)
    expect((await get(path, { 'if-none-match': '"other"' })).status).toBe(200)

    const kv = await nc.jetstream().views.kv('mesh-provisioner_needs')
    // A write on another node leaves this answer, and so its ETag, alone (docs/http.md, §8).
    const elsewhere = await kv.put('shanks.mail.dir.elsewhere', '{}')
    await vi.waitFor(() => expect(running.views.status().needs.revision).toBeGreaterThanOrEqual(elsewhere), { timeout: 5000, interval: 10 })
    expect((await get(path, { 'if-none-match': etag })).status).toBe(304)

    await kv.put('novox.gitea.dir.data', JSON.stringify({ path: '/var/lib/gitea' }))
    const changed = await vi.waitFor(async () => {
      const got = await get(path, { 'if-none-match': etag })
      expect(got.status, 'the answer to change').toBe(200)
      return got
    }, { timeout: 10_000, interval: 50 })
    expect(changed.headers['etag']).not.toBe(etag)
    expect(changed.body).toContain('novox.gitea.dir.data')
    expect((await get(path, { 'if-none-match': changed.headers['etag'] as string })).status).toBe(304)
  })

  test('several values: the answer is the union of what each keeps, in key order, and its ETag moves with a write on any of them, never on another node', async () => {
    const path = '/v1/applied?node=novox&node=ace'
    const keys = async (p: string): Promise<string[]> => (JSON.parse((await get(p)).body) as { entries: Array<{ key: string }> }).entries.map((e) => e.key)
    expect(await keys(path)).toEqual([...await keys('/v1/applied?node=ace'), ...await keys('/v1/applied?node=novox')])
    const etag = (await get(path)).headers['etag'] as string
    const kv = await nc.jetstream().views.kv('mesh-provisioner_applied')
    const elsewhere = await kv.put('shanks.union-elsewhere', '{}')
    await vi.waitFor(() => expect(running.views.status().applied.revision).toBeGreaterThanOrEqual(elsewhere), { timeout: 5000, interval: 10 })
    expect((await get(path, { 'if-none-match': etag })).status).toBe(304)
    const written = await kv.put('novox.union-here', '{}')
    await vi.waitFor(() => expect(running.views.status().applied.revision).toBeGreaterThanOrEqual(written), { timeout: 5000, interval: 10 })
    const changed = await get(path, { 'if-none-match': etag })
    expect(changed.status).toBe(200)
    expect(JSON.parse(changed.body)).toMatchObject({ revision: written, cursor: expect.stringMatching(new RegExp(`^${written}-`)) })
  })

  test('GET /v1/registry/{kind} carries an ETag too, and HEAD answers the headers of GET', async () => {
    const entry = await get('/v1/registry/bound')
    expect(entry.headers['etag']).toMatch(/^"/)
    expect((await get('/v1/registry/bound', { 'if-none-match': entry.headers['etag'] as string })).status).toBe(304)
    const head = await http(running.url, '/v1/registry/bound', { method: 'HEAD' })
    expect([head.status, head.body, head.headers['etag'], head.headers['content-type']]).toEqual([200, '', entry.headers['etag'], JSON_TYPE])
  })
})

describe('operations', () => {
  test('/healthz', async () => {
    const got = await get('/healthz')
    expect([got.status, got.headers['content-type'], JSON.parse(got.body)]).toEqual([200, JSON_TYPE, { ok: true, version: '0.0.0-test' }])
  })

  test('/readyz says per bucket what the views hold, and the last registry run', async () => {
    const got = await get('/readyz')
    expect(got.status).toBe(200)
    const body = JSON.parse(got.body) as Record<string, unknown>
    const status = running.views.status()
    expect(body).toMatchObject({ ready: true, connected: true, registryWriter: { ok: true } })
    expect(body['buckets']).toMatchObject({
      needs: { bucket: 'mesh-provisioner_needs', state: 'live', stale: false, keys: status.needs.keys, outOfShape: 2, revision: status.needs.revision },
      applied: { state: 'live', outOfShape: 1 },
      collect: { state: 'live', outOfShape: 1 },
      registry: { state: 'live', keys: 13 }
    })
  })

  test('/metrics counts requests by route and outcome', async () => {
    const count = async (route: string, outcome: string): Promise<number> => {
      const text = (await get('/metrics')).body
      const line = text.split('\n').find((l) => l.startsWith(`mesh_provisioner_requests_total{face="http",route="${route}",outcome="${outcome}"}`))
      return line === undefined ? 0 : Number(line.split(' ').at(-1))
    }
    const got = await get('/metrics')
    expect(got.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
    const ok = await count('/v1/applied', 'ok')
    const bad = await count('/v1/applied', 'BAD_REQUEST')
    await get('/v1/applied')
    await get('/v1/applied?node=ace')
    await get('/v1/applied?limit=-1')
    expect(await count('/v1/applied', 'ok')).toBe(ok + 2)
    expect(await count('/v1/applied', 'BAD_REQUEST')).toBe(bad + 1)
    const metrics = (await get('/metrics')).body
    expect(metrics).toMatch(/mesh_provisioner_request_duration_seconds_count\{face="http",route="\/v1\/applied"\} \d+/)
    // Each request's time is measured, not counted as 0.
    expect(Number(/mesh_provisioner_request_duration_seconds_sum\{face="http",route="\/v1\/applied"\} (\S+)/.exec(metrics)?.[1])).toBeGreaterThan(0)
  })

  test('/metrics says the verb\'s requests, each view\'s size, the registry runs and the NATS connection', async () => {
    const value = (text: string, series: string): number | undefined => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `))
      return line === undefined ? undefined : Number(line.split(' ').at(-1))
    }
    const before = value((await get('/metrics')).body, 'mesh_provisioner_requests_total{face="bus",route="needs",outcome="ok"}') ?? 0
    await verb({ what: 'needs', node: 'ace' })
    const text = (await get('/metrics')).body
    const status = running.views.status()
    expect(value(text, 'mesh_provisioner_requests_total{face="bus",route="needs",outcome="ok"}')).toBe(before + 1)
    expect(value(text, 'mesh_provisioner_view_keys{bucket="mesh-provisioner_needs"}')).toBe(status.needs.keys)
    expect(value(text, 'mesh_provisioner_view_out_of_shape{bucket="mesh-provisioner_needs"}')).toBe(2)
    expect(value(text, 'mesh_provisioner_view_live{bucket="mesh-provisioner_collect"}')).toBe(1)
    expect(value(text, 'mesh_provisioner_view_revision{bucket="mesh-provisioner_applied"}')).toBe(status.applied.revision)
    expect(value(text, 'mesh_provisioner_registry_runs_total{outcome="ok"}')).toBeGreaterThanOrEqual(1)
    expect(value(text, 'mesh_provisioner_registry_kinds_total{action="wrote"}')).toBe(13)
    expect(value(text, 'mesh_provisioner_nats_connected')).toBe(1)
  })

  test('echoes the request id', async () => {
    expect((await get('/healthz', { 'x-request-id': 'console-42' })).headers['x-request-id']).toBe('console-42')
    expect((await get('/healthz')).headers['x-request-id']).toMatch(/.+/)
  })

  test('serves the OpenAPI document and the Swagger UI', async () => {
    const doc = await get('/openapi.json')
    expect(doc.status).toBe(200)
    expect(Object.keys((JSON.parse(doc.body) as { paths: object }).paths)).toEqual(expect.arrayContaining(['/v1/registry', '/v1/registry/{kind}', '/v1/needs', '/v1/applied', '/v1/collect']))
    const page = await get('/docs/')
    expect(page.status).toBe(200)
    expect(page.body).toContain('swagger-ui')
  })
})

describe('CORS', () => {
  let withCors: Running
  const console_ = 'https://console.example'
  beforeAll(async () => {
    withCors = await fx.service(server, { CORS_ORIGINS: console_ })
    await untilReady(withCors)
  })

  const preflight = (origin: string) => ({ method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'GET' } })

  test('allows a listed origin, preflight and GET', async () => {
    const pre = await http(withCors.url, '/v1/needs?node=ace', preflight(console_))
    expect(pre.status).toBe(204)
    expect(pre.headers['access-control-allow-origin']).toBe(console_)
    expect(pre.headers['access-control-allow-methods']).toBe('GET, HEAD')
    const got = await http(withCors.url, '/v1/needs?node=ace', { headers: { origin: console_ } })
    expect(got.status).toBe(200)
    expect(got.headers['access-control-allow-origin']).toBe(console_)
    expect(got.headers['access-control-expose-headers']).toBe('ETag, X-Request-Id')
    expect(got.headers['vary']).toContain('Origin')
  })

  test('refuses another origin: no CORS headers, and the preflight is not allowed', async () => {
    const pre = await http(withCors.url, '/v1/needs', preflight('https://evil.example'))
    expect(pre.status).toBe(405)
    expect(pre.headers['access-control-allow-origin']).toBeUndefined()
    const got = await http(withCors.url, '/v1/needs', { headers: { origin: 'https://evil.example' } })
    expect(got.status).toBe(200)
    expect(got.headers['access-control-allow-origin']).toBeUndefined()
  })

  test('sends no CORS headers at all when no origin is configured', async () => {
    const got = await get('/v1/needs', { origin: console_ })
    expect(got.headers['access-control-allow-origin']).toBeUndefined()
    expect((await http(running.url, '/v1/needs', preflight(console_))).status).toBe(405)
  })
})
