// The mesh at a glance is cut at the bus's max payload like any answer, alike on both faces: on a
// server with a small max_payload, modules answer the same bytes on both, cut with reason `payload`.

import { beforeAll, expect, test, vi } from 'vitest'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import { request } from './support/http.js'
import { startSeeded, suiteFixture, type Seeded } from './support/service.js'
import { requestVerb } from './support/verb.js'

const fx = suiteFixture()
let seeded: Seeded

beforeAll(async () => {
  seeded = await startSeeded(fx, { config: 'max_payload: 8192' })
  const kv = await seeded.nc.jetstream().views.kv(BUCKETS.applied)
  let last = 0
  for (let i = 0; i < 60; i++) last = await kv.put(`extra-${String(i).padStart(2, '0')}.gitea`, '{}')
  await vi.waitFor(() => expect(seeded.running.views.byWhat.applied.status().revision).toBeGreaterThanOrEqual(last), { timeout: 5000, interval: 10 })
})

test('cuts /v1/modules where the verb cuts, and pages on from next to the end', async () => {
  const ask = async (payload: Record<string, unknown>, path: string): Promise<{ total: number, modules: unknown[], next?: string, cut?: { reason: string, omitted: number } }> => {
    const res = await request(`${seeded.running.url}${path}`)
    const body = await res.body.text()
    const bus = new TextDecoder().decode((await requestVerb(seeded.nc, JSON.stringify(payload))).data)
    expect(res.statusCode).toBe(200)
    expect(body).toBe(bus)
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(8192)
    return JSON.parse(body)
  }
  const first = await ask({ what: 'modules' }, '/v1/modules')
  expect(first.cut?.reason).toBe('payload')
  expect(first.modules.length + (first.cut?.omitted ?? 0)).toBe(first.total)
  let seen = first.modules.length
  for (let page = first; page.next !== undefined;) {
    page = await ask({ what: 'modules', after: page.next }, `/v1/modules?after=${page.next}`)
    seen += page.modules.length
  }
  expect(seen).toBe(first.total)
})
