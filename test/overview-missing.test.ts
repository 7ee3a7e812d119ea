// The mesh at a glance meeting a missing bucket (docs/buckets.md, §10) against a real nats-server: an
// overview that reads the bucket says stale while the service doubts it is gone, then 503 naming
// it, on both faces; one that does not read it answers as before; the bucket back is served again.

import { expect, test, vi } from 'vitest'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import type { Running } from '../src/service.js'
import { createClientBuckets } from '../testkit/sample-mesh.js'
import { request } from './support/http.js'
import { fixture, untilReady } from './support/service.js'
import { askVerb } from './support/verb.js'

interface Got { status: number, etag: string | undefined, body: string }

test('without collect, /v1/nodes says stale, then 503 naming it, while /v1/modules (needs and applied) answers as before, on both faces; collect back, nodes are served again', async () => {
  const fx = fixture()
  const server = await fx.server()
  const nc = await fx.admin(server)
  const kv = await createClientBuckets(nc)
  await kv.needs.put('ace.gitea.secret.db-password', '{}')
  await kv.applied.put('ace.gitea', '{}')
  await kv.collect.put('ace.environment.gitea', '{}')
  const running: Running = await fx.service(server)
  await untilReady(running)

  const get = async (path: string, headers: Record<string, string> = {}): Promise<Got> => {
    const res = await request(`${running.url}${path}`, { headers })
    return { status: res.statusCode, etag: res.headers['etag'] as string | undefined, body: await res.body.text() }
  }
  /** The gateway's answer to `path` and the verb's to `request`: the same status and document. */
  const both = async (path: string, payload: Record<string, unknown>): Promise<{ status: number, doc: any, etag: string | undefined }> => {
    const [http, bus] = await Promise.all([get(path), askVerb(nc, payload)])
    expect([bus.code, bus.body], `the verb answers ${JSON.stringify(payload)} as GET ${path}`).toEqual([http.status, JSON.parse(http.body)])
    return { status: http.status, doc: JSON.parse(http.body), etag: http.etag }
  }

  const nodes = await both('/v1/nodes', { what: 'nodes' })
  expect(nodes).toMatchObject({ status: 200, doc: { stale: false, nodes: [{ node: 'ace', collect: 1 }] } })
  const modules = await both('/v1/modules', { what: 'modules' })
  expect(modules).toMatchObject({ status: 200, doc: { stale: false, modules: [{ node: 'ace', module: 'gitea', state: 'applied' }] } })

  await kv.collect.destroy()
  // While the service doubts the bucket is gone, it answers from what it holds, and says so.
  await vi.waitFor(async () => {
    expect(await both('/v1/nodes', { what: 'nodes' })).toMatchObject({ status: 200, doc: { ...nodes.doc, stale: true } })
  }, { timeout: 5000, interval: 20 })
  expect(await both('/v1/modules', { what: 'modules' }), 'the modules read no collect: not stale, the same answer').toEqual(modules)
  // Once it is gone: the overview reading it names it, the one that does not answers as it did.
  const missing = { error: { code: 'BUCKET_MISSING', message: expect.stringContaining(`bucket ${BUCKETS.collect} does not exist`) } }
  await vi.waitFor(async () => {
    expect(await both('/v1/nodes', { what: 'nodes' })).toMatchObject({ status: 503, doc: missing })
  }, { timeout: 10_000, interval: 50 })
  expect(await both('/v1/nodes?node=ace', { what: 'nodes', node: 'ace' })).toMatchObject({ status: 503, doc: missing })
  const row = await get('/v1/nodes/ace')
  expect({ status: row.status, doc: JSON.parse(row.body) }).toMatchObject({ status: 503, doc: missing })
  expect(await both('/v1/modules', { what: 'modules' })).toEqual(modules)
  expect(await get('/v1/modules', { 'if-none-match': modules.etag as string })).toEqual({ status: 304, etag: modules.etag, body: '' })
  expect(await both('/v1/modules?state=applied', { what: 'modules', state: 'applied' })).toMatchObject({ status: 200, doc: { stale: false, total: 1 } })
  expect(await get('/v1/modules/ace/gitea')).toMatchObject({ status: 200 })

  const back = await createClientBuckets(nc)
  await back.collect.put('ace.environment.gitea', '{}')
  await back.collect.put('ace.environment.mail', '{}')
  await vi.waitFor(async () => {
    expect(await both('/v1/nodes', { what: 'nodes' })).toMatchObject({ status: 200, doc: { stale: false, nodes: [{ node: 'ace', collect: 2 }] } })
  }, { timeout: 10_000, interval: 50 })
})
