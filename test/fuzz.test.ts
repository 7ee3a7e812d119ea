// Hostile input, generated: verb payloads (random bytes, wrong shapes, huge strings, control
// characters, unicode, every field of the wrong type) and HTTP query strings. Every input gets a
// valid answer or a 4xx with the error body, never a 5xx, never a missing reply, and the service
// is still ready afterwards.

import fc from 'fast-check'
import type { NatsConnection } from 'nats'
import { request } from './support/http.js'
import { beforeAll, expect, test } from 'vitest'
import { WHATS } from '../src/domain/wire/key-shapes.js'
import type { Running } from '../src/service.js'
import { startSeeded, suiteFixture, untilWritten, type Seeded } from './support/service.js'
import { requestVerb } from './support/verb.js'

const fx = suiteFixture()
let seeded: Seeded
let nc: NatsConnection
let running: Running

beforeAll(async () => {
  seeded = await startSeeded(fx)
  nc = seeded.nc
  running = seeded.running
  await untilWritten(running)
})

const FIELDS = ['what', 'node', 'module', 'contributor', 'kind', 'collection', 'after', 'limit']

/** Strings of every sort: control characters, lone surrogates, emoji, NATS wildcards, huge ones. */
const nasty = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom('', '.', '*', '>', 'a.b', 'ace', 'needs', 'registry', '=3A', '=ZZ', 'shell:zsh:normal', '\u0000', '\ud800', '🦄', '-1', '1e309', 'NaN', '__proto__', 'constructor'),
  fc.integer({ min: 10_000, max: 300_000 }).map((n) => 'x'.repeat(n))
)

/** Any JSON value, including the wrong type for every field. */
const anyValue = fc.oneof(nasty, fc.jsonValue({ maxDepth: 3 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(nasty, { maxLength: 3 }))

/** Request-shaped objects: known fields (right and wrong values) mixed with unknown ones. */
const requestObject = fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 12 })), fc.oneof(fc.constantFrom(...WHATS), anyValue), { maxKeys: 6 })

const payload = fc.oneof(
  fc.uint8Array({ maxLength: 2000 }),
  requestObject.map((o) => JSON.stringify(o)),
  anyValue.map((v) => JSON.stringify(v) ?? 'undefined'),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.tuple(requestObject, fc.constantFrom('', '}', ',', ' trailing', '\u0000')).map(([o, tail]) => JSON.stringify(o) + tail)
)

function checkError (code: number, body: unknown, allowed: number[]): void {
  expect(allowed, `status ${code}: ${JSON.stringify(body)}`).toContain(code)
  const error = (body as { error?: { code?: unknown, message?: unknown } }).error
  expect(typeof error?.code).toBe('string')
  expect(typeof error?.message === 'string' && error.message.length > 0).toBe(true)
}

function checkAnswer (body: unknown): void {
  expect(body).toMatchObject({ what: expect.stringMatching(/^(registry|needs|applied|collect)$/), entries: expect.any(Array), stale: false })
}

test('every verb payload gets a reply: an answer, or 400 with the error body', async () => {
  await fc.assert(fc.asyncProperty(payload, async (data) => {
    const msg = await requestVerb(nc, data, { timeout: 10_000 })
    const code = msg.headers?.get('Nats-Service-Error-Code')
    const body = JSON.parse(msg.string()) as unknown
    if (code) {
      checkError(Number(code), body, [400])
      expect(msg.headers?.get('Nats-Service-Error')).toBeTruthy()
    } else {
      checkAnswer(body)
    }
  }), { numRuns: 300 })
}, 120_000)

test('CR/LF in a payload or a field value cannot break the error header: still 400 with the error body', async () => {
  for (const node of ['a\r\nNats-Service-Error-Code: 200', '\n', 'x\ry', '\u0000\u2028']) {
    const msg = await requestVerb(nc, JSON.stringify({ what: 'needs', node }))
    expect(msg.headers?.get('Nats-Service-Error-Code')).toBe('400')
    expect(msg.json()).toMatchObject({ error: { code: 'BAD_REQUEST', field: 'node' } })
  }
  // JSON.parse quotes the bad text in its message, new lines and all (found by the property above).
  for (const payload of ['a\nb', '\n\u0000', '{\r\n', 'x\r']) {
    const msg = await requestVerb(nc, payload)
    expect(msg.headers?.get('Nats-Service-Error-Code')).toBe('400')
    expect(msg.headers?.get('Nats-Service-Error')).toMatch(/^the payload is not JSON \(.*\); send a JSON object/)
    expect(msg.json()).toMatchObject({ error: { code: 'BAD_REQUEST', message: expect.stringMatching(/^the payload is not JSON/) } })
  }
})

/** A query string of random pairs, each part percent-encoded or sent as printable ASCII. */
const queryString = fc.array(fc.tuple(
  fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 10 })),
  fc.oneof(nasty.filter((s) => s.length < 5000), fc.integer().map(String))
), { maxLength: 5 }).chain((pairs) => fc.constantFrom('encoded', 'raw').map((how) => pairs.map(([k, v]) => how === 'encoded'
  ? `${encodeURIComponent(k.toWellFormed())}=${encodeURIComponent(v.toWellFormed())}`
  : `${k.replace(/[^!-~]|[#%&]/g, '')}=${v.replace(/[^!-~]|[#%&]/g, '')}`).join('&')))

const path = fc.oneof(
  fc.constantFrom(...WHATS).map((w) => ({ path: `/v1/${w}`, allowed: [400] })),
  fc.constantFrom('/v1/registry/%', '/v1/registry/%E0%A4%A', '/v1/needs%', '/v1/%zz').map((p) => ({ path: p, allowed: [400] })),
  fc.oneof(nasty.filter((s) => s.length > 0 && s.length < 5000), fc.constantFrom('secret', 'bound')).map((k) => ({ path: `/v1/registry/${encodeURIComponent(k.toWellFormed())}`, allowed: [400, 404] }))
)

test('every HTTP query string gets an answer or a 4xx with the error body, never a 5xx', async () => {
  await fc.assert(fc.asyncProperty(path, queryString, async ({ path, allowed }, query) => {
    const res = await request(`${running.url}${path}${query === '' ? '' : `?${query}`}`)
    const text = await res.body.text()
    const body = JSON.parse(text) as unknown
    if (res.statusCode === 200) {
      if (path.startsWith('/v1/registry/')) expect(body).toMatchObject({ kind: expect.any(String) })
      else checkAnswer(body)
    } else {
      checkError(res.statusCode, body, allowed)
    }
  }), { numRuns: 300 })
}, 120_000)

test('after all that the service is still ready and answers', async () => {
  const ready = await request(`${running.url}/readyz`)
  expect(ready.statusCode).toBe(200)
  await ready.body.dump()
  const msg = await requestVerb(nc, '{"what":"needs","node":"ace","limit":1}')
  expect(msg.headers?.get('Nats-Service-Error-Code') ?? '').toBe('')
  expect(msg.json()).toMatchObject({ what: 'needs', total: expect.any(Number) })
})
