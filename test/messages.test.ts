// Refusals that lead somewhere, as a newcomer meets them on the seeded mesh: a mistyped cursor is
// said to be no cursor this service gave (not a bucket deleted and created again), `wait` on a route
// without `since` names If-None-Match alone, a collection filter written as a key spells it names
// the name to give, and a path with some of a key's fields names the list that filters by them.

import type { NatsConnection } from 'nats'
import { beforeAll, describe, expect, test } from 'vitest'
import type { Running } from '../src/service.js'
import { request } from './support/http.js'
import { startSeeded, suiteFixture } from './support/service.js'
import { askVerb } from './support/verb.js'

const fx = suiteFixture()
let nc: NatsConnection
let running: Running

beforeAll(async () => {
  ({ nc, running } = await startSeeded(fx))
})

async function refusal (path: string): Promise<{ status: number, error: { code: string, message: string, field?: string } }> {
  const res = await request(`${running.url}${path}`)
  return { status: res.statusCode, error: (await res.body.json() as { error: { code: string, message: string, field?: string } }).error }
}

describe('a cursor this service never gave', () => {
  const message = 'since "1-1" is not a cursor this service gave: its generation, 1, is no time bucket mesh-provisioner_needs was created; ask the list again without since and follow the cursor its answer gives'

  test('is said to be one, on both faces, with what to do', async () => {
    expect(await refusal('/v1/needs?since=1-1')).toEqual({ status: 410, error: { code: 'CURSOR_EXPIRED', field: 'since', message } })
    expect(await askVerb(nc, { what: 'needs', since: '1-1' })).toMatchObject({ code: 410, error: message })
  })

  test('while an older generation is still said to be one', async () => {
    expect((await refusal('/v1/needs?since=1-1700000000000000000')).error.message).toBe('since names another generation of bucket mesh-provisioner_needs (it was deleted and created again since); ask the list again without since and follow its cursor')
  })
})

test.each(['/v1/nodes', '/v1/modules', '/v1/needs/facets?by=node', '/v1/registry/secret'])('wait on %s, which takes no since, names If-None-Match alone', async (path) => {
  expect(await refusal(`${path}${path.includes('?') ? '&' : '?'}wait=5s`)).toEqual({
    status: 400,
    error: { code: 'BAD_REQUEST', field: 'wait', message: 'wait holds this request until its answer changes: give If-None-Match (the ETag of an earlier answer) with it (this route takes no since)' }
  })
})

describe('a collection filter written as a key spells it', () => {
  const message = 'collection: "shell=3Azsh=3Anormal" is a name as a key spells it, which would match nothing; the filter takes the name itself: "shell:zsh:normal"'

  test('names the name to give, on both faces; the name itself answers', async () => {
    expect(await refusal('/v1/collect?collection=shell=3Azsh=3Anormal&node=ace')).toEqual({ status: 400, error: { code: 'BAD_REQUEST', field: 'collection', message } })
    expect(await askVerb(nc, { what: 'collect', collection: 'shell=3Azsh=3Anormal' })).toMatchObject({ code: 400, error: message })
    const named = await request(`${running.url}/v1/collect?collection=shell:zsh:normal&node=ace`)
    expect(named.statusCode).toBe(200)
    expect((await named.body.json() as { total: number }).total).toBeGreaterThan(0)
  })

  test('a name without an escape in it, or whose escapes spell no name, is asked as it is', async () => {
    for (const name of ['environment', 'a=3', 'x=ZZ']) expect((await request(`${running.url}/v1/collect?collection=${encodeURIComponent(name)}`)).statusCode, name).toBe(200)
  })
})

test.each([
  ['/v1/needs/ace/gitea', '/v1/needs/{node}/{module}/{kind}/{name}', '/v1/needs?node=ace&module=gitea'],
  ['/v1/needs/ace', '/v1/needs/{node}/{module}/{kind}/{name}', '/v1/needs?node=ace'],
  ['/v1/collect/ace/shell%3Azsh%3Anormal', '/v1/collect/{node}/{collection}/{contributor}', '/v1/collect?node=ace&collection=shell%3Azsh%3Anormal'],
  ['/v1/applied/g14', '/v1/applied/{node}/{module}', '/v1/applied?node=g14']
])('%s, a path with some of the key\'s fields, names the list that filters by them', async (path, route, list) => {
  expect(await refusal(path)).toEqual({
    status: 404,
    error: { code: 'NOT_FOUND', message: `no route serves GET ${path}: ${route} takes every field of the key, and ${list} lists the entries of the fields given; the routes are listed in /openapi.json and shown at /docs` }
  })
  const listed = await request(`${running.url}${list}`)
  expect(listed.statusCode).toBe(200)
  expect((await listed.body.json() as { total: number }).total).toBeGreaterThan(0)
})
