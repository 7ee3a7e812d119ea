// The helpers' wire check itself (support/wire.ts), without a server: what it lets through and
// what it refuses, so that a check that quietly passes everything fails here.

import { expect, test } from 'vitest'
import { checkHttpBody, checkVerbBody } from './support/wire.js'

const base = 'http://127.0.0.1:1'
const json = 'application/json; charset=utf-8'
const refusal = (code: string): string => JSON.stringify({ error: { code, message: 'why' } })

test.each([
  ['a documented answer', '/v1/registry/secret', 200, JSON.stringify({ key: 'secret', kind: 'secret', value: {}, revision: 1, updated: '2026-12-01T00:00:00.000Z' })],
  ['a documented refusal', '/v1/needs', 400, refusal('BAD_REQUEST')],
  ['the transport\'s own refusal on a documented route', '/v1/needs', 431, refusal('HEADERS_TOO_LARGE')],
  ['a refusal of an undocumented route', '/nowhere', 404, refusal('NOT_FOUND')],
  ['an undocumented route\'s answer', '/openapi.json', 200, '{"anything":true}']
])('lets through %s', async (_what, path, status, body) => {
  await expect(checkHttpBody('GET', `${base}${path}`, status, json, body)).resolves.toBeUndefined()
})

test.each([
  ['an answer missing a field', '/v1/registry/secret', 200, JSON.stringify({ key: 'secret', kind: 'secret', value: {}, revision: 1 }), /does not fit its published schema: \/ must have required property 'updated'/],
  ['a status the route does not give', '/v1/needs', 418, refusal('BAD_REQUEST'), /gives this route no 418 answer/],
  ['a refusal with a code no face has', '/nowhere', 404, refusal('TEAPOT'), /\/error\/code/]
])('refuses %s', async (_what, path, status, body, message) => {
  await expect(checkHttpBody('GET', `${base}${path}`, status, json, body)).rejects.toThrow(message)
})

test('the verb\'s answers and refusals are held to its schemas', () => {
  expect(() => { checkVerbBody({ what: 'registry' }, 503, JSON.parse(refusal('NOT_READY'))) }).not.toThrow()
  expect(() => { checkVerbBody({ what: 'registry' }, 400, JSON.parse(refusal('METHOD_NOT_ALLOWED'))) }).toThrow(/\/error\/code/)
  expect(() => { checkVerbBody({ what: 'needs' }, 200, { what: 'needs', entries: [] }) }).toThrow(/the verb's 200 to \{"what":"needs"\}: .*must have required property 'bucket'/)
})
