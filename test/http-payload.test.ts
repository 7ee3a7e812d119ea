// Both faces cut an answer at the bus's max payload alike: on a server with a small max_payload the
// gateway answers the same bytes as the verb, cut with reason `payload` and a `next` to go on.

import type { NatsConnection } from 'nats'
import { request } from './support/http.js'
import { beforeAll, expect, test } from 'vitest'
import type { Running } from '../src/service.js'
import { startSeeded, suiteFixture, type Seeded } from './support/service.js'
import { requestVerb } from './support/verb.js'

const fx = suiteFixture()
let seeded: Seeded
let nc: NatsConnection
let running: Running

beforeAll(async () => {
  seeded = await startSeeded(fx, { config: 'max_payload: 8192' })
  nc = seeded.nc
  running = seeded.running
})

test('cuts /v1/needs where the verb cuts, and pages on from next', async () => {
  const res = await request(`${running.url}/v1/needs`)
  const body = await res.body.text()
  const bus = new TextDecoder().decode((await requestVerb(nc, JSON.stringify({ what: 'needs' }))).data)
  expect(res.statusCode).toBe(200)
  expect(body).toBe(bus)
  expect(Buffer.byteLength(body)).toBeLessThanOrEqual(8192)
  const answer = JSON.parse(body) as { total: number, entries: unknown[], next: string, cut: { reason: string, omitted: number } }
  expect(answer.cut.reason).toBe('payload')
  expect(answer.entries.length + answer.cut.omitted).toBe(answer.total)
  const more = await request(`${running.url}/v1/needs?after=${encodeURIComponent(answer.next)}`)
  expect(more.statusCode).toBe(200)
  expect((JSON.parse(await more.body.text()) as { entries: unknown[] }).entries.length).toBeGreaterThan(0)
})
