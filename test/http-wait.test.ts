// HTTP's long poll (SPEC §8 "Waiting") against a real nats-server: a held `since` question answers
// when a change it would show lands, and a write it would not show (another node) does not
// release it.

import { request } from './support/http.js'
import { expect, it, vi } from 'vitest'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import { fixture, startSeeded } from './support/service.js'
import { askVerb } from './support/verb.js'

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

it('a cursor ahead of this instance (another one gave it) is waited for a moment on both faces, then refused 503 if never reached', async () => {
  const fx = fixture()
  const { nc, running } = await startSeeded(fx)
  const kv = await nc.jetstream().views.kv(BUCKETS.needs)
  const { cursor } = await (await request(`${running.url}/v1/needs?node=ace`)).body.json() as Answer
  const [revision, generation] = cursor.split('-') as [string, string]
  const ahead = (by: number): string => `${Number(running.views.status().needs.revision) + by}-${generation}`
  expect(Number(revision)).toBeLessThanOrEqual(running.views.status().needs.revision)

  // The write that reaches the cursor lands while both questions wait for it.
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
}, 20_000)
