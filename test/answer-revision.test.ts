// What an answer's revision, cursor and ETag follow (docs/following-changes.md): the keys its filter
// keeps and nothing else, on both faces, for filters no index matches exactly as for those one does,
// facets included; a held wait wakes only on a change the answer keeps; and a scoped token's answers
// are those of the same request naming its nodes (docs/access.md) while other nodes write.

import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import type { KV, NatsConnection } from 'nats'
import { beforeAll, describe, expect, test } from 'vitest'
import { BUCKETS, type What } from '../src/domain/wire/key-shapes.js'
import type { Running } from '../src/service.js'
import { newToken } from '../src/settings/tokens-file.js'
import { seedSampleMesh } from '../testkit/sample-mesh.js'
import { request } from './support/http.js'
import { suiteFixture, untilReady } from './support/service.js'
import { askVerb } from './support/verb.js'
import { seenWrites } from './support/seen-writes.js'

const made = { console: newToken('console', '*', false), ace: newToken('ace', ['ace'], false) }

let nc: NatsConnection
let running: Running
let kv: Record<Exclude<What, 'registry'>, KV>

const fx = suiteFixture()

beforeAll(async () => {
  const server = await fx.server()
  nc = await fx.admin(server)
  await seedSampleMesh(nc)
  const dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-revision-'))
  const file = join(dir, 'tokens.json')
  await writeFile(file, JSON.stringify({ tokens: Object.values(made).map((m) => m.entry) }))
  running = await fx.service(server, { HTTP_TOKENS_FILE: file })
  await untilReady(running)
  const js = nc.jetstream()
  kv = { needs: await js.views.kv(BUCKETS.needs), applied: await js.views.kv(BUCKETS.applied), collect: await js.views.kv(BUCKETS.collect) }
})

interface Got { status: number, etag: string | undefined, body: string }

async function get (path: string, who: keyof typeof made, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Got> {
  const res = await request(`${running.url}${path}`, { headers: { authorization: `Bearer ${made[who].token}`, ...headers }, signal })
  return { status: res.statusCode, etag: res.headers['etag'] as string | undefined, body: await res.body.text() }
}

const { put } = seenWrites(() => kv, () => running)
/** Writes `key` with a value of its own and waits until the service's view has it. */
const write = async (what: Exclude<What, 'registry'>, key: string): Promise<number> => await put(what, key, `{"at":${Date.now()}}`)

/** Whether `held` is still unanswered a while after the view took the last write: a held wait looks at a change in the turn after it. */
async function pending (held: Promise<unknown>): Promise<boolean> {
  return await Promise.race([held.then(() => false), new Promise<boolean>((resolve) => setTimeout(() => { resolve(true) }, 300))])
}

const named = (path: string): string => `${path}${path.includes('?') ? '&' : '?'}node=ace`

describe('a write the answer does not show moves neither its revision, cursor and ETag nor its held waits', () => {
  // Each request's filter is one no index matches exactly (or facets of one), with a write on g14 that its other fields keep.
  test.each([
    ['/v1/applied?module=gitea', { what: 'applied', module: 'gitea' }, 'applied', 'g14.gitea', 'ace.gitea'],
    ['/v1/collect?contributor=gitea', { what: 'collect', contributor: 'gitea' }, 'collect', 'g14.environment.gitea', 'ace.environment.gitea'],
    ['/v1/needs?module=gitea&name=settings', { what: 'needs', module: 'gitea', name: 'settings' }, 'needs', 'g14.gitea.config.settings', 'ace.gitea.config.settings'],
    ['/v1/applied/facets?by=node&module=gitea', { what: 'applied', module: 'gitea', by: 'node' }, 'applied', 'g14.gitea', 'ace.gitea'],
    ['/v1/applied/facets?by=module', { what: 'applied', by: 'module' }, 'applied', 'g14.gitea', 'ace.gitea'],
    ['/v1/collect/facets?by=contributor', { what: 'collect', by: 'contributor' }, 'collect', 'g14.environment.gitea', 'ace.environment.gitea']
  ] as const)('%s', async (path, verb, what, theirs, mine) => {
    const ask = async (): Promise<unknown> => (await askVerb(nc, { ...verb, node: 'ace' })).body
    const before = { scoped: await get(path, 'ace'), named: await get(named(path), 'console'), verb: await ask() }
    expect(before.scoped).toEqual(before.named)
    const { revision, cursor } = JSON.parse(before.scoped.body) as { revision: number, cursor: string }
    expect(before.verb).toMatchObject({ revision, cursor })
    // Held until the answer's ETag moves: g14's write does not wake it, ace's does.
    const held = get(`${path}&wait=60s`, 'ace', { 'if-none-match': before.scoped.etag as string })
    await write(what, theirs)
    expect(await get(path, 'ace')).toEqual(before.scoped)
    expect(await get(named(path), 'console')).toEqual(before.named)
    expect(await ask()).toEqual(before.verb)
    expect(await pending(held)).toBe(true)
    const changed = await write(what, mine)
    const woken = await held
    expect([woken.status, JSON.parse(woken.body).revision]).toEqual([200, changed])
    expect(woken).toEqual(await get(path, 'ace'))
    expect(await ask()).toMatchObject({ revision: changed })
  }, 20_000)
})

describe('facets of a scoped token count its nodes alone', () => {
  test.each([
    ['applied', 'module'],
    ['needs', 'kind'],
    ['collect', 'contributor'],
    ['collect', 'collection']
  ] as const)('%s by %s: each value at the last change of one of ace\'s keys holding it, on both faces', async (what, by) => {
    // A write of the value elsewhere, after ace's: the bucket-wide value is later than ace's.
    await write(what, { applied: 'g14.gitea', needs: 'g14.gitea.secret.later', collect: 'g14.environment.gitea' }[what])
    const list = JSON.parse((await get(`/v1/${what}?node=ace&limit=10000`, 'console')).body) as { entries: Array<Record<string, unknown> & { revision: number }> }
    const values = new Map<string, { count: number, revision: number }>()
    for (const e of list.entries) {
      const value = e[by] as string
      const held = values.get(value) ?? { count: 0, revision: 0 }
      values.set(value, { count: held.count + 1, revision: Math.max(held.revision, e.revision) })
    }
    const expected = [...values].sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b))).map(([value, c]) => ({ value, ...c }))
    const scoped = JSON.parse((await get(`/v1/${what}/facets?by=${by}`, 'ace')).body) as { values: unknown[] }
    expect(scoped.values).toEqual(expected)
    expect((await askVerb(nc, { what, node: 'ace', by })).body).toEqual(scoped)
  })
})

describe('a scoped token answers as the same request naming its nodes', () => {
  type Bucket = Exclude<What, 'registry'>
  interface Write { node: string, module: string, name: string, del: boolean }
  const keyOf: Record<Bucket, (w: Write) => string> = {
    applied: (w) => `${w.node}.${w.module}`,
    needs: (w) => `${w.node}.${w.module}.config.${w.name}`,
    collect: (w) => `${w.node}.environment.${w.module}`
  }
  const QUESTIONS: Array<[Bucket, string]> = [
    ['applied', '/v1/applied?module=gitea'],
    ['applied', '/v1/applied?limit=5'],
    ['applied', '/v1/applied/facets?by=module'],
    ['applied', '/v1/applied/facets?by=node&module=gitea'],
    ['needs', '/v1/needs?name=settings'],
    ['needs', '/v1/needs?module=gitea&kind=config'],
    ['needs', '/v1/needs/facets?by=module'],
    ['collect', '/v1/collect?contributor=gitea'],
    ['collect', '/v1/collect/facets?by=contributor']
  ]
  const writeArb = fc.record({ node: fc.constantFrom('ace', 'g14', 'novox'), module: fc.constantFrom('gitea', 'mail', 'keycloak'), name: fc.constantFrom('settings', 'extra'), del: fc.boolean() })

  test('answers, revisions, ETags and wake-ups, while other nodes write', async () => {
    await fc.assert(fc.asyncProperty(fc.constantFrom(...QUESTIONS), fc.array(writeArb, { minLength: 1, maxLength: 4 }), async ([what, path], writes) => {
      const before = await get(path, 'ace')
      expect(before.status).toBe(200)
      expect(await get(named(path), 'console')).toEqual(before)
      const gone = new AbortController()
      const held = [get(`${path}&wait=60s`, 'ace', { 'if-none-match': before.etag as string }, gone.signal), get(`${named(path)}&wait=60s`, 'console', { 'if-none-match': before.etag as string }, gone.signal)]
        .map(async (answer) => await answer.catch(() => undefined))
      for (const w of writes) {
        if (w.del) await kv[what].delete(keyOf[what](w))
        // A write on a node no request reads: the view has taken every change before it.
        await write(what, keyOf[what]({ node: 'zed', module: 'sync', name: 'sync', del: false }))
        if (!w.del) await write(what, keyOf[what](w))
      }
      const after = await get(path, 'ace')
      expect(await get(named(path), 'console')).toEqual(after)
      if (writes.every((w) => w.node !== 'ace')) expect(after).toEqual(before)
      if (after.etag === before.etag) expect(await pending(Promise.race(held))).toBe(true)
      else {
        const [scoped, asNamed] = await Promise.all(held)
        expect([scoped?.status, asNamed?.status]).toEqual([200, 200])
      }
      gone.abort()
      await Promise.all(held)
    }), { numRuns: 25 })
  }, 120_000)
})
