// HTTP's long poll (SPEC §8 "Waiting") against a real nats-server: a held `since` question answers
// when a change it would show lands, and a write it would not show (another node) does not
// release it.

import { request } from 'undici'
import { expect, it, vi } from 'vitest'
import { BUCKETS } from '../src/domain/buckets.js'
import { fixture, startSeeded } from './support/service.js'

interface Answer { entries: Array<{ key: string }>, deleted: unknown[], cursor: string, revision: number }

it('a held since question answers with the change that lands, and a write on another node does not release it', async () => {
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
