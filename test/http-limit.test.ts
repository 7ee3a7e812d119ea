// HTTP's limit: 1000 unless asked (the verb has no default: it cuts only at the max payload), and
// at most 10000 (docs/http.md). The sample mesh is too small to show a default, so this suite writes more.

import { request } from './support/http.js'
import { beforeAll, expect, test } from 'vitest'
import type { NatsConnection } from 'nats'
import type { Running } from '../src/service.js'
import { createClientBuckets } from '../testkit/sample-mesh.js'
import { suiteFixture, untilReady } from './support/service.js'
import { askVerb } from './support/verb.js'

const KEYS = 1201
const fx = suiteFixture()
let nc: NatsConnection
let running: Running

beforeAll(async () => {
  const server = await fx.server()
  nc = await fx.admin(server)
  const { applied } = await createClientBuckets(nc)
  await Promise.all(Array.from({ length: KEYS }, async (_, i) => await applied.put(`n${i % 7}.m${i}`, '{}')))
  running = await fx.service(server)
  await untilReady(running)
})

async function applied (query: string): Promise<{ status: number, body: any }> {
  const res = await request(`${running.url}/v1/applied${query}`)
  return { status: res.statusCode, body: await res.body.json() }
}

test('answers 1000 entries unless asked, and says what it cut', async () => {
  const { status, body } = await applied('')
  expect(status).toBe(200)
  expect(body.entries).toHaveLength(1000)
  expect(body).toMatchObject({ total: KEYS, cut: { reason: 'limit', omitted: KEYS - 1000 }, next: body.entries[999].key })
})

test('takes up to 10000, and refuses more naming the limit', async () => {
  const all = await applied('?limit=10000')
  expect(all.body.entries).toHaveLength(KEYS)
  expect(all.body).not.toHaveProperty('cut')
  const refused = await applied('?limit=10001')
  expect(refused.status).toBe(400)
  expect(refused.body.error).toMatchObject({ code: 'BAD_REQUEST', field: 'limit', message: expect.stringContaining('a whole number from 1 to 10000') })
})

test('the verb has no default limit', async () => {
  const reply = await askVerb(nc, { what: 'applied' })
  expect(reply.body.entries).toHaveLength(KEYS)
})
