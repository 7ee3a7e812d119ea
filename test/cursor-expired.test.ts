// A cursor of another generation of its bucket (the bucket deleted and created again since) is
// 410 CURSOR_EXPIRED on both faces (docs/following-changes.md), at once: the client is told to fetch the list again,
// never answered changes of a history that is gone, nor held waiting for it.

import type { NatsConnection } from 'nats'
import { beforeAll, expect, test, vi } from 'vitest'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import type { Running } from '../src/service.js'
import { request } from './support/http.js'
import { suiteFixture, untilReady } from './support/service.js'
import { askVerb } from './support/verb.js'

const fx = suiteFixture()
let nc: NatsConnection
let running: Running
/** The cursor of the applied bucket's first generation. */
let oldCursor: string

beforeAll(async () => {
  const server = await fx.server()
  nc = await fx.admin(server)
  const kv = await nc.jetstream().views.kv(BUCKETS.applied)
  await kv.put('ace.gitea', '{"v":1}')
  running = await fx.service(server)
  await untilReady(running)
  oldCursor = (await askVerb(nc, { what: 'applied' })).body.cursor as string
  await (await nc.jetstreamManager()).streams.delete(`KV_${BUCKETS.applied}`)
  await (await nc.jetstream().views.kv(BUCKETS.applied)).put('ace.gitea', '{"v":2}')
  // Served from the new generation: its answer's cursor names another generation than the old one.
  await vi.waitFor(async () => {
    const { body } = await askVerb(nc, { what: 'applied' })
    expect(body).toMatchObject({ stale: false, entries: [{ value: { v: 2 } }] })
    expect(body.cursor.split('-')[1]).not.toBe(oldCursor.split('-')[1])
  }, { timeout: 10_000, interval: 100 })
})

test('over HTTP: 410 with the code CURSOR_EXPIRED naming since, at once even with wait', async () => {
  for (const query of [`since=${encodeURIComponent(oldCursor)}`, `since=${encodeURIComponent(oldCursor)}&wait=30s`]) {
    const started = Date.now()
    const res = await request(`${running.url}/v1/applied?${query}`)
    expect(res.statusCode, query).toBe(410)
    expect(await res.body.json(), query).toMatchObject({ error: { code: 'CURSOR_EXPIRED', field: 'since', message: expect.stringMatching(/another generation of bucket mesh-provisioner_applied/) } })
    expect(Date.now() - started, query).toBeLessThan(5000)
  }
})

test('on the bus: Nats-Service-Error-Code 410 and the code CURSOR_EXPIRED naming since', async () => {
  const reply = await askVerb(nc, { what: 'applied', since: oldCursor })
  expect(reply.code).toBe(410)
  expect(reply.error).toMatch(/another generation of bucket mesh-provisioner_applied/)
  expect(reply.body).toMatchObject({ error: { code: 'CURSOR_EXPIRED', field: 'since' } })
})

test('the new generation\'s own cursor is served on both faces', async () => {
  const { body } = await askVerb(nc, { what: 'applied' })
  expect((await askVerb(nc, { what: 'applied', since: body.cursor })).code).toBe(200)
  expect((await request(`${running.url}/v1/applied?since=${encodeURIComponent(body.cursor as string)}`)).statusCode).toBe(200)
})
