// The bounds of held requests against a real nats-server (docs/following-changes.md "Bounds"): event streams shared
// between tokens by the even-share rule, and /healthz and /readyz answering while every stream and
// every wait is held.

import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from './support/http.js'
import { expect, test } from 'vitest'
import { HEADROOM } from '../src/http/holds.js'
import { newToken } from '../src/settings/tokens-file.js'
import { seedSampleMesh } from '../testkit/sample-mesh.js'
import { fixture, untilReady } from './support/service.js'
import { isSynced, openStream, untilEvent } from './support/sse.js'

test('streams are shared between tokens: one under its share ends the oldest stream of the one holding most; the probes answer while all is held', async () => {
  const fx = fixture()
  const server = await fx.server()
  await seedSampleMesh(await fx.admin(server))
  const dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-holds-'))
  const file = join(dir, 'tokens.json')
  const one = newToken('one', '*', false)
  const two = newToken('two', ['ace'], false)
  await writeFile(file, JSON.stringify({ tokens: [one.entry, two.entry] }))
  const running = await fx.service(server, { HTTP_TOKENS_FILE: file, HTTP_MAX_STREAMS: '2', HTTP_MAX_WAITS: '1' })
  await untilReady(running)
  expect(running.app.server.maxConnections).toBe(2 + 1 + HEADROOM)
  const auth = (token: string) => ({ authorization: `Bearer ${token}` })
  const url = `${running.url}/v1/applied/events?node=ace`

  const first = await openStream(url, auth(one.token))
  await untilEvent(first, isSynced)
  const second = await openStream(url, auth(one.token))
  await untilEvent(second, isSynced)
  const refused = await openStream(url, auth(one.token))
  expect([refused.status, refused.headers['retry-after']]).toEqual([503, '5'])

  // Token two is under its even share (1 of 2): admitted, ending one's oldest stream.
  const theirs = await openStream(url, auth(two.token))
  expect(theirs.status).toBe(200)
  await first.ended
  await untilEvent(theirs, isSynced)
  expect((await openStream(url, auth(one.token))).status).toBe(503)

  // Every stream and the one wait held: the probes still answer.
  const listed = await request(`${running.url}/v1/applied?node=ace`, { headers: auth(two.token) })
  const etag = listed.headers.etag as string
  await listed.body.dump()
  const held = request(`${running.url}/v1/applied?node=ace&wait=60s`, { headers: { ...auth(two.token), 'if-none-match': etag } })
  const full = await request(`${running.url}/v1/applied?node=ace&wait=1ms`, { headers: { ...auth(two.token), 'if-none-match': etag } })
  for (const path of ['/healthz', '/readyz']) {
    const probe = await request(`${running.url}${path}`)
    expect(probe.statusCode, path).toBe(200)
    await probe.body.dump()
  }
  expect(full.statusCode).toBe(503)
  await full.body.dump()
  // The stop answers the held wait at once, as at its end.
  const stopped = running.stop()
  expect((await held).statusCode).toBe(304)
  await stopped
}, 30_000)
