// The mesh at a glance (docs/glance.md) on both faces against a real nats-server: each module state
// built by writing in a controlled order, nodes rows (a node named only by out-of-shape keys
// too), facets' counts and revisions, several values a filter, `wait` with If-None-Match, paging,
// cuts, 404s and the refusals of a bad `by` or `state`.

import type { KV, NatsConnection } from 'nats'
import { beforeAll, describe, expect, test, vi } from 'vitest'
import type { Running } from '../src/service.js'
import { BUCKETS, type What } from '../src/domain/wire/key-shapes.js'
import { createClientBuckets } from '../testkit/sample-mesh.js'
import { request } from './support/http.js'
import { suiteFixture, untilReady, untilWritten } from './support/service.js'
import { requestVerb } from './support/verb.js'
import { seenWrites } from './support/seen-writes.js'

const fx = suiteFixture()
let nc: NatsConnection
let kv: Record<Exclude<What, 'registry'>, KV>
let running: Running

interface Got { status: number, etag: string | undefined, body: string }

async function get (path: string, headers: Record<string, string> = {}): Promise<Got> {
  const res = await request(`${running.url}${path}`, { headers })
  return { status: res.statusCode, etag: res.headers['etag'] as string | undefined, body: await res.body.text() }
}

async function verb (payload: Record<string, unknown>): Promise<{ body: string, code: string | undefined }> {
  const msg = await requestVerb(nc, JSON.stringify(payload))
  return { body: new TextDecoder().decode(msg.data), code: msg.headers?.get('Nats-Service-Error-Code') ?? undefined }
}

/** Writes that return once the service's view has read them. */
const { put, remove } = seenWrites(() => kv, () => running)

/** Sends a request with `wait` and If-None-Match, and gives its answer to come once the service holds it (it asked to be woken by a change). */
async function holding (path: string, etag: string): Promise<{ answer: Promise<Got> }> {
  // A bucket's answers wait through the bucket's waiters, the nodes' and modules' through their own.
  const changed = [vi.spyOn(running.provisioning, 'changed'), vi.spyOn(running.provisioning.overviews, 'changed')]
  try {
    const answer = get(path, { 'if-none-match': etag })
    await vi.waitFor(() => expect(changed.some((spy) => spy.mock.calls.length > 0), 'the request held').toBe(true), { timeout: 5000, interval: 5 })
    return { answer }
  } finally {
    for (const spy of changed) spy.mockRestore()
  }
}

/** Both faces' answer to the same request, which must be the same bytes. */
async function both (path: string, payload: Record<string, unknown>): Promise<unknown> {
  const [http, bus] = await Promise.all([get(path), verb(payload)])
  expect(http.status, http.body).toBe(200)
  expect(bus.code, bus.body).toBeUndefined()
  expect(http.body).toBe(bus.body)
  return JSON.parse(http.body)
}

const states = (doc: unknown): Record<string, string> => Object.fromEntries((doc as { modules: Array<{ node: string, module: string, state: string }> }).modules.map((m) => [`${m.node}.${m.module}`, m.state]))

beforeAll(async () => {
  const server = await fx.server()
  nc = await fx.admin(server)
  kv = await createClientBuckets(nc)
  running = await fx.service(server)
  await untilReady(running)
  // Each state by the order of the writes: the need before the applied entry, or after it.
  await put('needs', 'ace.gitea.secret.db-password')
  await put('applied', 'ace.gitea')
  await put('applied', 'ace.mail')
  await put('needs', 'ace.mail.secret.dkim')
  await put('needs', 'ace.keycloak.config.realm')
  await put('needs', 'ace.keycloak.secret.admin')
  await put('applied', 'ace.wireguard')
  await put('collect', 'ace.shell=3Azsh=3Anormal.gitea')
  await put('collect', 'ace.environment.gitea')
  await put('collect', 'ace.environment.mail')
  // A node named only by a key out of shape, and a contributor of collect alone.
  await put('needs', 'bob.gitea')
  await put('collect', 'cy.shell=3Azsh=3Anormal.loki')
})

describe('modules', () => {
  test('says each state as the order of the writes made it, on both faces alike', async () => {
    const doc = await both('/v1/modules', { what: 'modules' })
    expect(states(doc)).toEqual({ 'ace.gitea': 'applied', 'ace.keycloak': 'unapplied', 'ace.mail': 'pending', 'ace.wireguard': 'orphaned' })
    const rows = (doc as { modules: Array<Record<string, unknown>> }).modules
    expect(rows[1]).toMatchObject({ node: 'ace', module: 'keycloak', needs: 2, applied: null, state: 'unapplied' })
    expect(rows[3]).toMatchObject({ module: 'wireguard', needs: 0, needsUpdated: null, applied: { revision: expect.any(Number) } })
    expect(rows[2]?.['needsUpdated']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/)
    expect(doc).toMatchObject({ what: 'modules', stale: false, total: 4 })
  })

  test('moves a module between states as needs and its applied entry are written', async () => {
    await put('needs', 'ace.gitea.config.settings')
    expect(states(await both('/v1/modules?node=ace&module=gitea', { what: 'modules', node: 'ace', module: 'gitea' }))).toEqual({ 'ace.gitea': 'pending' })
    await put('applied', 'ace.gitea')
    expect(states(await both('/v1/modules?node=ace&module=gitea', { what: 'modules', node: 'ace', module: 'gitea' }))).toEqual({ 'ace.gitea': 'applied' })
    await remove('needs', 'ace.gitea.config.settings')
    await remove('needs', 'ace.gitea.secret.db-password')
    expect(JSON.parse((await get('/v1/modules/ace/gitea')).body)).toMatchObject({ needs: 0, needsUpdated: null, state: 'orphaned' })
    await put('needs', 'ace.gitea.secret.db-password')
    expect(JSON.parse((await get('/v1/modules/ace/gitea')).body)).toMatchObject({ needs: 1, state: 'pending' })
  })

  test('answers the pending modules anywhere, and refuses a state that is not one of the four', async () => {
    expect(states(await both('/v1/modules?state=pending', { what: 'modules', state: 'pending' }))).toEqual({ 'ace.gitea': 'pending', 'ace.mail': 'pending' })
    // A write the answer does not show leaves its ETag alone: the orphaned module's applied entry, rewritten.
    const [pending, all] = await Promise.all([get('/v1/modules?state=pending'), get('/v1/modules')])
    await put('applied', 'ace.wireguard', '{"again":true}')
    expect((await get('/v1/modules?state=pending', { 'if-none-match': pending.etag as string })).status).toBe(304)
    expect((await get('/v1/modules', { 'if-none-match': all.etag as string })).status).toBe(200)
    const http = await get('/v1/modules?state=done')
    const bus = await verb({ what: 'modules', state: 'done' })
    expect(http.status).toBe(400)
    expect(bus.code).toBe('400')
    expect(JSON.parse(http.body)).toEqual(JSON.parse(bus.body))
    expect(JSON.parse(http.body).error).toMatchObject({ code: 'BAD_REQUEST', field: 'state', message: expect.stringContaining('unapplied, pending, applied, orphaned') })
  })

  test('takes several values a filter, on both faces alike: a row is kept when its field is any of them', async () => {
    const path = '/v1/modules?state=pending&state=orphaned&module=keycloak&module=mail&module=wireguard'
    expect(states(await both(path, { what: 'modules', state: ['pending', 'orphaned'], module: ['keycloak', 'mail', 'wireguard'] }))).toEqual({ 'ace.mail': 'pending', 'ace.wireguard': 'orphaned' })
    expect(Object.keys(states(await both('/v1/modules?node=ace&node=bob&module=keycloak&module=gitea', { what: 'modules', node: ['ace', 'bob'], module: ['keycloak', 'gitea'] })))).toEqual(['ace.gitea', 'ace.keycloak'])
  })

  test('pages by <node>.<module> and cuts at the limit', async () => {
    const first = await both('/v1/modules?limit=2', { what: 'modules', limit: 2 }) as { next: string, cut: unknown, modules: unknown[] }
    expect(first).toMatchObject({ total: 4, next: 'ace.keycloak', cut: { reason: 'limit', omitted: 2 } })
    const rest = await both(`/v1/modules?after=${first.next}`, { what: 'modules', after: first.next })
    expect(Object.keys(states(rest))).toEqual(['ace.mail', 'ace.wireguard'])
  })

  test('gives one row, 404 when neither needs nor applied has it (a contributor of collect alone is none)', async () => {
    expect(JSON.parse((await get('/v1/modules/ace/keycloak')).body)).toMatchObject({ node: 'ace', module: 'keycloak', state: 'unapplied' })
    for (const path of ['/v1/modules/cy/loki', '/v1/modules/ace/nothing']) {
      const got = await get(path)
      expect(got.status).toBe(404)
      expect(JSON.parse(got.body).error.code).toBe('NOT_FOUND')
    }
    expect((await get('/v1/modules/ace/gitea.x')).status).toBe(400)
  })
})

describe('nodes', () => {
  test('gives a row per node the three buckets name, a node named only by an out-of-shape key too', async () => {
    const doc = await both('/v1/nodes', { what: 'nodes' }) as { nodes: Array<Record<string, unknown>> }
    expect(doc).toMatchObject({ what: 'nodes', stale: false, total: 3 })
    expect(doc.nodes.map((n) => n['node'])).toEqual(['ace', 'bob', 'cy'])
    expect(doc.nodes[0]).toMatchObject({ node: 'ace', needs: 4, applied: 3, collect: 3, outOfShape: 0, modules: { applied: 0, pending: 2, unapplied: 1, orphaned: 1 } })
    expect(doc.nodes[1]).toEqual({ node: 'bob', needs: 0, applied: 0, collect: 0, outOfShape: 1, updated: null, modules: { applied: 0, pending: 0, unapplied: 0, orphaned: 0 }, waiting: 0, waitingSince: null, unanswered: 0 })
    expect(doc.nodes[2]).toMatchObject({ node: 'cy', collect: 1, modules: { applied: 0, pending: 0, unapplied: 0, orphaned: 0 } })
    // What a per-node last-write gauge reads: the same moment as the row, none for a node without entries.
    const writes = running.provisioning.overviews.lastWrites()
    expect([...writes.keys()]).toEqual(['ace', 'cy'])
    expect(new Date(writes.get('ace') as number).toISOString()).toBe(doc.nodes[0]?.['updated'])
  })

  test('takes several nodes, on both faces alike', async () => {
    const doc = await both('/v1/nodes?node=ace&node=cy', { what: 'nodes', node: ['ace', 'cy'] }) as { nodes: Array<{ node: string }> }
    expect(doc).toMatchObject({ what: 'nodes', total: 2 })
    expect(doc.nodes.map((n) => n.node)).toEqual(['ace', 'cy'])
  })

  test('dates a node by the latest write of its entries still there', async () => {
    await put('collect', 'cy.environment.loki')
    const latest = (await kv.collect.get('cy.environment.loki'))?.created.toISOString()
    expect(JSON.parse((await get('/v1/nodes/cy')).body)).toMatchObject({ collect: 2, updated: latest })
    const earlier = (await kv.collect.get('cy.shell=3Azsh=3Anormal.loki'))?.created.toISOString()
    await remove('collect', 'cy.environment.loki')
    expect(JSON.parse((await get('/v1/nodes/cy')).body)).toMatchObject({ collect: 1, updated: earlier })
  })

  test('pages by node, keeps a node filter\'s ETag still under another node\'s writes, and 404s a node no key names', async () => {
    expect(await both('/v1/nodes?limit=1', { what: 'nodes', limit: 1 })).toMatchObject({ total: 3, next: 'ace', cut: { reason: 'limit', omitted: 2 } })
    expect(await both('/v1/nodes?after=ace&node=bob', { what: 'nodes', after: 'ace', node: 'bob' })).toMatchObject({ total: 1 })
    const before = await get('/v1/nodes?node=ace')
    await put('needs', 'cy.loki.secret.s3')
    expect((await get('/v1/nodes?node=ace', { 'if-none-match': before.etag as string })).status).toBe(304)
    expect((await get('/v1/nodes?node=cy', { 'if-none-match': before.etag as string })).status).toBe(200)
    const missing = await get('/v1/nodes/zed')
    expect(missing.status).toBe(404)
    expect(JSON.parse(missing.body).error.code).toBe('NOT_FOUND')
    await remove('needs', 'cy.loki.secret.s3')
  })
})

describe('wait with If-None-Match', () => {
  test('holds /v1/nodes?node=… until its row changes, and answers 304 when the wait ends on another node\'s write', async () => {
    const cy = await get('/v1/nodes?node=cy')
    const held = get('/v1/nodes?node=cy&wait=10s', { 'if-none-match': cy.etag as string })
    await put('collect', 'cy.environment.loki')
    const woken = await held
    expect(woken.status).toBe(200)
    expect(JSON.parse(woken.body).nodes[0]).toMatchObject({ node: 'cy', collect: 2 })
    const ace = await get('/v1/nodes?node=ace')
    const still = get('/v1/nodes?node=ace&wait=500ms', { 'if-none-match': ace.etag as string })
    await remove('collect', 'cy.environment.loki')
    expect((await still).status).toBe(304)
    expect((await get('/v1/modules?wait=1s')).status).toBe(400)
  })

  test('wakes no held wait on a write that moves no row it shows: 200 waits on ?state=pending stay held through writes of applied modules', async () => {
    const path = '/v1/modules?state=pending'
    const { etag } = await get(path)
    const changed = vi.spyOn(running.provisioning.overviews, 'changed')
    try {
      const held = Array.from({ length: 200 }, async () => await get(`${path}&wait=10s`, { 'if-none-match': etag as string }))
      await vi.waitFor(() => expect(changed).toHaveBeenCalledTimes(200), { timeout: 5000, interval: 10 })
      // The orphaned module's applied entry, and a collect item: no pending row moves.
      await put('applied', 'ace.wireguard', '{"quiet":1}')
      await put('collect', 'ace.environment.gitea', '{"quiet":1}')
      await new Promise((resolve) => setTimeout(resolve, 100))
      // A woken wait would have asked again after finding its ETag unchanged.
      expect(changed).toHaveBeenCalledTimes(200)
      await put('needs', 'ace.wireguard.secret.key2')
      const answers = await Promise.all(held)
      expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200]))
      expect(changed).toHaveBeenCalledTimes(200)
      await remove('needs', 'ace.wireguard.secret.key2')
    } finally {
      changed.mockRestore()
    }
  })

  test.each([
    { path: '/v1/needs/facets?by=kind&node=ace', elsewhere: ['needs', 'cy.loki.secret.s3'], change: ['needs', 'ace.mail.port.smtp'], shows: { values: [{ value: 'config' }, { value: 'port', count: 1 }, { value: 'secret' }] } },
    // The orphaned module's applied entry written again: no row the pending modules show moves.
    { path: '/v1/modules?state=pending', elsewhere: ['applied', 'ace.wireguard'], change: ['needs', 'ace.wireguard.secret.key'], shows: { modules: expect.arrayContaining([expect.objectContaining({ module: 'wireguard', needs: 1, state: 'pending' })]) } },
    { path: '/v1/modules/ace/keycloak', elsewhere: ['needs', 'ace.mail.secret.other'], change: ['needs', 'ace.keycloak.secret.more'], shows: { module: 'keycloak', needs: 3, state: 'unapplied' } }
  ] as const)('holds $path while a write elsewhere leaves it unchanged, answers 200 once one changes it, and 304 when the wait ends', async ({ path, elsewhere: [where, other], change: [what, key], shows }) => {
    const wait = (ms: string): string => `${path}${path.includes('?') ? '&' : '?'}wait=${ms}`
    const { etag, body } = await get(path)
    const sent = Date.now()
    const still = await holding(wait('1s'), etag as string)
    await put(where, other)
    expect(await still.answer).toEqual({ status: 304, etag, body: '' })
    expect(Date.now() - sent, 'held to the end of the wait').toBeGreaterThanOrEqual(990)

    const held = await holding(wait('10s'), etag as string)
    await put(where, other, '{"again":true}')
    await put(what, key)
    const woken = await held.answer
    expect(woken.status).toBe(200)
    expect(woken.etag).not.toBe(etag)
    expect(woken.body).not.toBe(body)
    expect(woken).toEqual(await get(path))
    expect(JSON.parse(woken.body)).toMatchObject(shows)
    await remove(what, key)
    if (where === 'needs') await remove(where, other)
  })
})

describe('facets', () => {
  test('counts each value with the last revision that touched it, on both faces alike', async () => {
    const doc = await both('/v1/needs/facets?by=node', { what: 'needs', by: 'node' }) as { values: Array<{ value: string, count: number, revision: number }>, revision: number }
    expect(doc).toMatchObject({ what: 'needs', bucket: 'mesh-provisioner_needs', by: 'node', total: 1, outOfShape: 1 })
    expect(doc.values.map(({ value, count }) => [value, count])).toEqual([['ace', 4]])
    const last = await put('needs', 'ace.mail.port.smtp')
    const after = await both('/v1/needs/facets?by=kind&node=ace', { what: 'needs', by: 'kind', node: 'ace' }) as typeof doc
    expect(after.values.map(({ value, count }) => [value, count])).toEqual([['config', 1], ['port', 1], ['secret', 3]])
    expect(after.values.find((v) => v.value === 'port')?.revision).toBeGreaterThanOrEqual(last)
    expect(after.values.find((v) => v.value === 'config')?.revision).toBeLessThan(last)
    await remove('needs', 'ace.mail.port.smtp')
  })

  test('counts the union of several nodes, on both faces alike: their entries, and the out-of-shape keys of any', async () => {
    await put('needs', 'cy.loki.secret.s3')
    const union = await both('/v1/needs/facets?by=kind&node=ace&node=cy', { what: 'needs', by: 'kind', node: ['ace', 'cy'] })
    expect(union).toMatchObject({ by: 'kind', total: 2, outOfShape: 0, values: [{ value: 'config', count: 1 }, { value: 'secret', count: 4 }] })
    // bob is named only by its out-of-shape key bob.gitea: it adds no value, and is counted.
    expect(await both('/v1/needs/facets?by=kind&node=bob&node=ace', { what: 'needs', by: 'kind', node: ['bob', 'ace'] })).toMatchObject({ total: 2, outOfShape: 1, values: [{ value: 'config', count: 1 }, { value: 'secret', count: 3 }] })
    await remove('needs', 'cy.loki.secret.s3')
  })

  test('sorts collections by their decoded names and pages them by value', async () => {
    const doc = await both('/v1/collect/facets?by=collection', { what: 'collect', by: 'collection' })
    expect(doc).toMatchObject({ total: 2, values: [{ value: 'environment', count: 2 }, { value: 'shell:zsh:normal', count: 2 }] })
    expect(await both('/v1/collect/facets?by=module&limit=1', { what: 'collect', by: 'module', limit: 1 })).toMatchObject({ by: 'contributor', total: 3, values: [{ value: 'gitea', count: 2 }], next: 'gitea', cut: { reason: 'limit', omitted: 2 } })
    expect(await both('/v1/collect/facets?by=contributor&after=gitea', { what: 'collect', by: 'contributor', after: 'gitea' })).toMatchObject({ total: 3, values: [{ value: 'loki' }, { value: 'mail' }] })
  })

  test('counts the registry by kind, each kind once', async () => {
    const run = await untilWritten(running)
    const kinds = run.wrote.length + run.left.length
    await vi.waitFor(() => expect(running.views.byWhat.registry.status().keys).toBe(kinds), { timeout: 10_000, interval: 20 })
    const doc = await both('/v1/registry/facets?by=kind', { what: 'registry', by: 'kind' }) as { total: number, values: Array<{ value: string, count: number }> }
    expect(doc.total).toBe(kinds)
    expect(doc.values.every((v) => v.count === 1)).toBe(true)
    expect(doc.values.map((v) => v.value)).toContain('secret')
  })

  test('refuses a by the bucket does not count, and a facets route without by', async () => {
    const http = await get('/v1/applied/facets?by=kind')
    const bus = await verb({ what: 'applied', by: 'kind' })
    expect(http.status).toBe(400)
    expect(bus.code).toBe('400')
    expect(JSON.parse(http.body)).toEqual(JSON.parse(bus.body))
    expect(JSON.parse(http.body).error).toMatchObject({ field: 'by', message: expect.stringContaining('node, module') })
    const none = await get('/v1/needs/facets')
    expect(none.status).toBe(400)
    expect(JSON.parse(none.body).error).toMatchObject({ field: 'by' })
    expect((await get('/v1/needs?by=node')).status).toBe(400)
  })

  test.each([
    ['needs', 'name', 'node, module, kind'],
    ['registry', 'node', 'kind'],
    ['collect', 'state', 'node, collection, contributor (module for contributor)']
  ])('refuses %s/facets?by=%s naming the fields of that bucket alone, as the verb does', async (what, by, takes) => {
    const http = await get(`/v1/${what}/facets?by=${by}`)
    const bus = await verb({ what, by })
    expect([http.status, bus.code]).toEqual([400, '400'])
    expect(JSON.parse(http.body)).toEqual({ error: { code: 'BAD_REQUEST', message: `by: "${by}" is no field of ${what} whose values are counted; ${what} takes by = ${takes}`, field: 'by' } })
    expect(JSON.parse(bus.body)).toEqual(JSON.parse(http.body))
  })
})

describe('why, and since when', () => {
  const row = async (path: string): Promise<Record<string, unknown>> => JSON.parse((await get(path)).body) as Record<string, unknown>

  test('says how many needs wait and since when, as the order of the writes made it, on both faces alike', async () => {
    await put('needs', 'dee.web.secret.a')
    const first = (await row('/v1/modules/dee/web'))['needsUpdated']
    await put('needs', 'dee.web.config.b')
    expect(await both('/v1/modules?node=dee', { what: 'modules', node: 'dee' })).toMatchObject({ modules: [{ state: 'unapplied', waiting: 2, waitingSince: first, unanswered: 0 }] })
    await put('applied', 'dee.web')
    expect(await row('/v1/modules/dee/web')).toMatchObject({ state: 'applied', waiting: 0, waitingSince: null })
    // Written again after the applied entry: that need alone waits, since its new write.
    await put('needs', 'dee.web.secret.a', '{"again":true}')
    const again = (await row('/v1/modules/dee/web'))['needsUpdated']
    expect(again).not.toBe(first)
    await put('needs', 'dee.web.port.c')
    expect(await both('/v1/modules?node=dee', { what: 'modules', node: 'dee' })).toMatchObject({ modules: [{ state: 'pending', needs: 3, waiting: 2, waitingSince: again }] })
    await put('needs', 'dee.api.secret.d')
    const api = (await row('/v1/modules/dee/api'))['waitingSince'] as string
    // The node sums its modules' and takes the earliest.
    expect(await both('/v1/nodes?node=dee', { what: 'nodes', node: 'dee' })).toMatchObject({ nodes: [{ node: 'dee', waiting: 3, waitingSince: again, unanswered: 0 }] })
    expect(api > (again as string)).toBe(true)
    await put('applied', 'dee.web')
    await put('applied', 'dee.api')
    expect(await row('/v1/nodes/dee')).toMatchObject({ waiting: 0, waitingSince: null })
  })

  test('counts the needs of a kind no registry entry answers, and a registry write of that kind moves their rows and ETags, on both faces', async () => {
    const registry = await nc.jetstream().views.kv(BUCKETS.registry)
    const written = async (write: () => Promise<unknown>): Promise<void> => {
      await write()
      const last = (await registry.status()).streamInfo.state.last_seq
      await vi.waitFor(() => expect(running.views.byWhat.registry.status().revision).toBeGreaterThanOrEqual(last), { timeout: 5000, interval: 10 })
    }
    await put('needs', 'dee.web.no-such-kind.e')
    await put('needs', 'dee.web.no-such-kind.f')
    expect(await both('/v1/modules?node=dee&module=web', { what: 'modules', node: 'dee', module: 'web' })).toMatchObject({ modules: [{ unanswered: 2, state: 'pending' }] })
    expect(await both('/v1/nodes?node=dee', { what: 'nodes', node: 'dee' })).toMatchObject({ nodes: [{ unanswered: 2 }] })
    const [web, dee, ace] = await Promise.all([get('/v1/modules/dee/web'), get('/v1/nodes/dee'), get('/v1/nodes?node=ace')])
    await written(async () => await registry.put('no-such-kind', '{"kind":"no-such-kind","module":"test"}'))
    expect(await both('/v1/modules?node=dee&module=web', { what: 'modules', node: 'dee', module: 'web' })).toMatchObject({ modules: [{ unanswered: 0 }] })
    expect(await row('/v1/nodes/dee')).toMatchObject({ unanswered: 0 })
    expect((await get('/v1/modules/dee/web', { 'if-none-match': web.etag as string })).status).toBe(200)
    expect((await get('/v1/nodes/dee', { 'if-none-match': dee.etag as string })).status).toBe(200)
    // A node with no need of that kind keeps its row and ETag.
    expect((await get('/v1/nodes?node=ace', { 'if-none-match': ace.etag as string })).status).toBe(304)
    await written(async () => await registry.delete('no-such-kind'))
    expect(await row('/v1/modules/dee/web')).toMatchObject({ unanswered: 2 })
    expect((await get('/v1/modules/dee/web', { 'if-none-match': web.etag as string })).status).toBe(304)
    await remove('needs', 'dee.web.no-such-kind.e')
    await remove('needs', 'dee.web.no-such-kind.f')
  })
})
