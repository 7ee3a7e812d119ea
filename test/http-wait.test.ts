// HTTP's long poll (docs/following-changes.md "`wait`") against a real nats-server: a held `since` request answers
// when a change it would show lands, and a write it would not show (another node) does not
// release it.

import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test, vi } from 'vitest'
import { request } from './support/http.js'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import { newToken } from '../src/settings/tokens-file.js'
import { seedSampleMesh } from '../testkit/sample-mesh.js'
import { fixture, startSeeded, untilReady } from './support/service.js'
import { askVerb } from './support/verb.js'

interface Answer { entries: Array<{ key: string }>, deleted: unknown[], cursor: string, revision: number }

test('a held since request answers with the change that lands, and a write on another node does not release it', async () => {
  const fx = fixture()
  const { nc, running } = await startSeeded(fx)
  const kv = await nc.jetstream().views.kv(BUCKETS.needs)
  const get = async (path: string): Promise<Answer> => {
    const res = await request(`${running.url}${path}`)
    expect(res.statusCode).toBe(200)
    return await res.body.json() as Answer
  }
  const { cursor } = await get('/v1/needs?node=ace')
  // The longest wait there is: only the change can answer it within the test's time.
  const held = get(`/v1/needs?node=ace&since=${cursor}&wait=60s`)
  const elsewhere = await kv.put('g14.gitea.config.elsewhere', '{}')
  await vi.waitFor(() => expect(running.views.status().needs.revision).toBeGreaterThanOrEqual(elsewhere), { timeout: 5000, interval: 10 })
  const mine = await kv.put('ace.gitea.config.mine', '{}')
  const answer = await held
  expect(answer.entries.map((e) => e.key)).toEqual(['ace.gitea.config.mine'])
  expect(answer.revision).toBe(mine)
}, 20_000)

test('a held request of several nodes answers with a change on any of them, and not with one on another node', async () => {
  const fx = fixture()
  const { nc, running } = await startSeeded(fx)
  const kv = await nc.jetstream().views.kv(BUCKETS.applied)
  const get = async (path: string): Promise<Answer> => {
    const res = await request(`${running.url}${path}`)
    expect(res.statusCode).toBe(200)
    return await res.body.json() as Answer
  }
  const { cursor } = await get('/v1/applied?node=ace&node=g14')
  const held = get(`/v1/applied?node=ace&node=g14&since=${cursor}&wait=60s`)
  const elsewhere = await kv.put('shanks.elsewhere', '{}')
  await vi.waitFor(() => expect(running.views.status().applied.revision).toBeGreaterThanOrEqual(elsewhere), { timeout: 5000, interval: 10 })
  const theirs = await kv.put('g14.several', '{}')
  const answer = await held
  expect(answer.entries.map((e) => e.key)).toEqual(['g14.several'])
  expect(answer.revision).toBe(theirs)
}, 20_000)

test('a cursor ahead of this instance (another one gave it) is waited for a moment on both faces, then refused 503 if never reached', async () => {
  const fx = fixture()
  const { nc, running } = await startSeeded(fx)
  const kv = await nc.jetstream().views.kv(BUCKETS.needs)
  const { cursor } = await (await request(`${running.url}/v1/needs?node=ace`)).body.json() as Answer
  const [revision, generation] = cursor.split('-') as [string, string]
  const ahead = (by: number): string => `${Number(running.views.status().needs.revision) + by}-${generation}`
  expect(Number(revision)).toBeLessThanOrEqual(running.views.status().needs.revision)

  // The write that reaches the cursor lands while both requests wait for it.
  const next = ahead(1)
  const overHttp = request(`${running.url}/v1/needs?node=ace&since=${next}`)
  const onBus = askVerb(nc, { what: 'needs', node: 'ace', since: next })
  await kv.put('g14.gitea.config.reached', '{}')
  expect((await overHttp).statusCode).toBe(200)
  expect((await onBus).code).toBe(200)

  const never = ahead(1000)
  const refused = await request(`${running.url}/v1/needs?since=${never}`)
  expect(refused.statusCode).toBe(503)
  expect(await refused.body.json()).toMatchObject({ error: { code: 'NOT_READY', message: expect.stringMatching(/not yet/) } })
  expect(await askVerb(nc, { what: 'needs', since: never })).toMatchObject({ code: 503 })

  // An older generation's cursor is never waited on, even one past this generation's revision (a
  // bucket created again starts over): 410 at once, where the settling moment is 2 s.
  const older = `${Number(running.views.status().needs.revision) + 1000}-${BigInt(generation) - 1n}`
  const started = Date.now()
  expect((await request(`${running.url}/v1/needs?since=${older}&wait=30s`)).statusCode).toBe(410)
  expect(await askVerb(nc, { what: 'needs', since: older })).toMatchObject({ code: 410 })
  expect(Date.now() - started).toBeLessThan(1500)
}, 20_000)

describe('wait with If-None-Match', () => {
  test('holds a list while its ETag would match: a write elsewhere leaves it held, one it shows answers 200; a wait that ends is 304', async () => {
    const fx = fixture()
    const { nc, running } = await startSeeded(fx)
    const kv = await nc.jetstream().views.kv(BUCKETS.needs)
    const first = await request(`${running.url}/v1/needs?node=ace`)
    const etag = first.headers.etag as string
    await first.body.dump()

    const bare = await request(`${running.url}/v1/needs?node=ace&wait=5s`)
    expect([bare.statusCode, (await bare.body.json() as { error: { field: string } }).error.field]).toEqual([400, 'wait'])
    const stale = await request(`${running.url}/v1/needs?node=ace&wait=60s`, { headers: { 'if-none-match': '"another"' } })
    expect(stale.statusCode).toBe(200)
    await stale.body.dump()
    const ended = await request(`${running.url}/v1/needs?node=ace&wait=200ms`, { headers: { 'if-none-match': etag } })
    expect([ended.statusCode, ended.headers.etag]).toEqual([304, etag])
    await ended.body.dump()

    const held = request(`${running.url}/v1/needs?node=ace&wait=60s`, { headers: { 'if-none-match': etag } })
    const elsewhere = await kv.put('g14.gitea.config.elsewhere', '{}')
    await vi.waitFor(() => expect(running.views.status().needs.revision).toBeGreaterThanOrEqual(elsewhere), { timeout: 5000, interval: 10 })
    const mine = await kv.put('ace.gitea.config.mine', '{}')
    const answer = await held
    expect(answer.statusCode).toBe(200)
    expect(answer.headers.etag).not.toBe(etag)
    const body = await answer.body.json() as Answer
    expect(body.revision).toBe(mine)
    expect(body.entries.map((e) => e.key)).toContain('ace.gitea.config.mine')
  }, 20_000)

  test('holds a list of several nodes while its ETag would match: a write on another node leaves it held, one on any of its nodes answers 200', async () => {
    const fx = fixture()
    const { nc, running } = await startSeeded(fx)
    const kv = await nc.jetstream().views.kv(BUCKETS.applied)
    const path = `${running.url}/v1/applied?node=ace&node=g14`
    const first = await request(path)
    const etag = first.headers.etag as string
    await first.body.dump()
    const held = request(`${path}&wait=60s`, { headers: { 'if-none-match': etag } })
    const elsewhere = await kv.put('shanks.several-elsewhere', '{}')
    await vi.waitFor(() => expect(running.views.status().applied.revision).toBeGreaterThanOrEqual(elsewhere), { timeout: 5000, interval: 10 })
    const theirs = await kv.put('g14.several-held', '{}')
    const answer = await held
    expect(answer.statusCode).toBe(200)
    const body = await answer.body.json() as Answer
    expect(body.revision).toBe(theirs)
    expect(body.entries.map((e) => e.key)).toContain('g14.several-held')
  }, 20_000)

  test('holds one entry while it is unchanged: its update answers 200, its deletion 404', async () => {
    const fx = fixture()
    const { nc, running } = await startSeeded(fx)
    const kv = await nc.jetstream().views.kv(BUCKETS.applied)
    await kv.put('ace.held', '{"v":1}')
    const path = `${running.url}/v1/applied/ace/held`
    const etag = await vi.waitFor(async () => {
      const got = await request(path)
      expect(got.statusCode).toBe(200)
      await got.body.dump()
      return got.headers.etag as string
    }, { timeout: 5000, interval: 20 })
    const updated = request(`${path}?wait=60s`, { headers: { 'if-none-match': etag } })
    await kv.put('ace.other', '{}')
    await kv.put('ace.held', '{"v":2}')
    const got = await updated
    expect(got.statusCode).toBe(200)
    expect(await got.body.json()).toMatchObject({ key: 'ace.held', value: { v: 2 } })
    const deleted = request(`${path}?wait=60s`, { headers: { 'if-none-match': got.headers.etag as string } })
    await kv.delete('ace.held')
    expect((await deleted).statusCode).toBe(404)
  }, 20_000)
})

describe('held requests are bounded and shared between tokens', () => {
  test('HTTP_MAX_WAITS: beyond it 503 with Retry-After; a token under its share ends the oldest of the one holding most; /healthz answers', async () => {
    const fx = fixture()
    const server = await fx.server()
    const nc = await fx.admin(server)
    await seedSampleMesh(nc)
    const dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-waits-'))
    const file = join(dir, 'tokens.json')
    const one = newToken('one', '*', false)
    const two = newToken('two', ['ace'], false)
    await writeFile(file, JSON.stringify({ tokens: [one.entry, two.entry] }))
    const running = await fx.service(server, { HTTP_TOKENS_FILE: file, HTTP_MAX_WAITS: '2', HTTP_MAX_STREAMS: '2' })
    await untilReady(running)
    const ask = (token: string, path: string, headers: Record<string, string> = {}) => request(`${running.url}${path}`, { headers: { authorization: `Bearer ${token}`, ...headers } })
    const first = await ask(one.token, '/v1/needs?node=ace')
    const etag = first.headers.etag as string
    await first.body.dump()
    const inm = { 'if-none-match': etag }

    // Token one takes both places (a probe admitted before they are held holds 1 ms).
    const both = [ask(one.token, '/v1/needs?node=ace&wait=60s', inm), ask(one.token, '/v1/needs?node=ace&wait=60s', inm)]
    await vi.waitFor(async () => {
      const refused = await ask(one.token, '/v1/needs?node=ace&wait=1ms', inm)
      expect(refused.statusCode).toBe(503)
      expect(refused.headers['retry-after']).toBe('5')
      expect(await refused.body.json()).toMatchObject({ error: { code: 'NOT_READY', message: expect.stringMatching(/HTTP_MAX_WAITS/) } })
    }, { timeout: 5000, interval: 20 })
    const health = await request(`${running.url}/healthz`)
    expect(health.statusCode).toBe(200)
    await health.body.dump()

    // Token two, under its even share (1 of 2), is held: one's oldest is answered as at the wait's end.
    const second = ask(two.token, '/v1/needs?node=ace&wait=60s', inm)
    const ended = await Promise.race(both.map(async (held, i) => ({ i, res: await held })))
    expect(ended.res.statusCode).toBe(304)
    const newer = both[1 - ended.i] as typeof second
    const refused = await ask(one.token, '/v1/needs?node=ace&wait=60s', inm)
    expect(refused.statusCode).toBe(503)
    await refused.body.dump()

    // Token two is taken away: its held request is refused, never answered with what comes after.
    await writeFile(file, JSON.stringify({ tokens: [one.entry] }))
    running.reload()
    const gone = await second
    expect(gone.statusCode).toBe(401)
    expect(gone.headers['www-authenticate']).toBe('Bearer realm="mesh-provisioner"')
    await gone.body.dump()
    const kv = await nc.jetstream().views.kv(BUCKETS.needs)
    await kv.put('ace.gitea.config.after', '{}')
    expect((await newer).statusCode).toBe(200)
  }, 20_000)
})
