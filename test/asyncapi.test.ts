// The AsyncAPI document of the verb, discovery and the event streams: the committed file is what
// the code generates, @asyncapi/parser reads it without a diagnostic, it is served open at
// /asyncapi.json, and real answers, refusals, discovery replies and events fit its message schemas.

import { readFile } from 'node:fs/promises'
import { Parser, type AsyncAPIDocumentInterface } from '@asyncapi/parser'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { JSONCodec } from 'nats'
import { beforeAll, describe, expect, test, vi } from 'vitest'
import { Answers } from '../src/domain/wire/schemas.js'
import { WHATS } from '../src/domain/wire/key-shapes.js'
import { asyncApiText } from '../src/http/asyncapi-document.js'
import { VERSION } from '../src/version.js'
import { killAndRestart, startSeeded, suiteFixture, type Seeded } from './support/service.js'
import { isSynced, openStream, untilEvent, type SseEvent } from './support/sse.js'
import { askVerb } from './support/verb.js'

const generated = asyncApiText(VERSION)
const parsed = await new Parser().parse(generated)
const doc = parsed.document as AsyncAPIDocumentInterface

const ajv = new Ajv({ strict: false, allErrors: true })
addFormats.default(ajv)

/** A validator of one message's payload (or headers), from the parsed document: its $refs resolved. */
function schemaOf (operation: string, message: string, part: 'payload' | 'headers' = 'payload', reply = false): ValidateFunction {
  const op = doc.operations().get(operation)
  if (op === undefined) throw new Error(`no operation ${operation}`)
  const messages = reply ? op.reply()?.messages().all() ?? [] : op.messages().all()
  const found = messages.find((m) => m.id() === message || m.name() === message)
  const schema = found?.[part]()?.json()
  if (schema === undefined) throw new Error(`no ${part} of ${message} in ${operation}`)
  return ajv.compile(schema as object)
}

/** Asserts that `value` fits: the errors are the message when it does not. */
function fits (validate: ValidateFunction, value: unknown, what: string): void {
  const ok = validate(value)
  expect(ok ? [] : validate.errors, `${what}: ${JSON.stringify(value).slice(0, 300)}`).toEqual([])
}

describe('the AsyncAPI document', () => {
  test('is committed as the code generates it (run `npm run openapi` after changing a schema)', async () => {
    expect(await readFile(new URL('../asyncapi/asyncapi.json', import.meta.url), 'utf8')).toBe(generated)
  })

  test('is read by @asyncapi/parser without any diagnostic', () => {
    expect(parsed.diagnostics.map((d) => `${d.severity} ${d.code}: ${d.message} at ${d.path.join('.')}`)).toEqual([])
    expect(doc.version()).toBe('3.1.0')
  })

  test('describes every request of the schemas on the verb, discovery, and every stream\'s event types', () => {
    const ops = doc.operations()
    for (const what of Object.keys(Answers)) {
      const op = ops.get(`answer${what[0]?.toUpperCase()}${what.slice(1)}`)
      expect(op?.action(), what).toBe('receive')
      expect(op?.channels().all()[0]?.address()).toBe('mesh-provisioner.provisioning')
      expect(op?.bindings().get('nats')?.value()).toMatchObject({ queue: 'mesh-provisioner' })
      // A bucket's list request with `by` answers its facets; the overviews have no facets.
      const facets = (WHATS as readonly string[]).includes(what) ? [`${what}Facets`] : []
      expect(op?.reply()?.messages().all().map((m) => m.id())).toEqual([`${what}Answer`, ...facets, 'refusal'])
    }
    expect(['discoverPing', 'discoverInfo', 'discoverStats'].map((id) => ops.get(id)?.channels().all()[0]?.address())).toEqual(['$SRV.PING', '$SRV.INFO', '$SRV.STATS'])
    for (const what of WHATS) {
      const op = ops.get(`follow${what[0]?.toUpperCase()}${what.slice(1)}`)
      expect(op?.action()).toBe('send')
      expect(op?.channels().all()[0]?.address()).toBe(`/v1/${what}/events`)
      expect(op?.messages().all().map((m) => m.name()).sort()).toEqual(['delete', 'live', 'outOfShape', 'put', 'reset', 'stale', 'synced'])
    }
    // The live rows: one put and one delete message per kind of row.
    for (const what of ['nodes', 'modules']) {
      const op = ops.get(`follow${what[0]?.toUpperCase()}${what.slice(1)}`)
      expect(op?.action()).toBe('send')
      expect(op?.channels().all()[0]?.address()).toBe(`/v1/${what}/events`)
      expect(op?.messages().all().map((m) => m.name()).sort()).toEqual(['delete', 'live', 'put', 'reset', 'stale', 'synced'])
    }
    const refusal = doc.components().messages().get('refusal')
    expect(Object.keys((refusal?.headers()?.json() as { properties: object }).properties)).toEqual(['Nats-Service-Error', 'Nats-Service-Error-Code'])
  })
})

/** A stream's events through `write` (up to a delete after it), then the reset that opens a stream resumed with an id it cannot serve. */
async function followed (url: string, write: () => Promise<void>): Promise<SseEvent[]> {
  const stream = await openStream(url)
  const synced = await untilEvent(stream, isSynced)
  await write()
  await untilEvent(stream, (e) => e.event === 'delete', synced)
  stream.close()
  const reset = await openStream(url, { 'last-event-id': 'not-a-cursor' })
  await untilEvent(reset, (e) => e.event === 'reset')
  reset.close()
  return [...stream.events, ...reset.events.slice(0, 1)]
}

/** Every event fits its message of `operation`, fields and data; the id of `synced` is its cursor, as the document says. */
function fitAll (operation: string, events: readonly SseEvent[]): void {
  for (const e of events) {
    const type = e.event
    fits(schemaOf(operation, type), JSON.parse(e.data), type)
    fits(schemaOf(operation, type, 'headers'), { event: type, ...(e.id === undefined ? {} : { id: e.id }) }, `${type} fields`)
  }
  const sync = events.find(isSynced)
  expect(sync?.id).toBe((JSON.parse(sync?.data ?? '{}') as { cursor: string }).cursor)
}

describe('against a running service', () => {
  const fx = suiteFixture()
  let seeded: Seeded
  beforeAll(async () => {
    seeded = await startSeeded(fx)
    // A need written after g14's gitea was applied: a pending module, so the pending answer has a row to check.
    const kv = await seeded.nc.jetstream().views.kv('mesh-provisioner_needs')
    await kv.put('g14.gitea.secret.api-token', JSON.stringify({ file: '/run/secrets/gitea/api-token' }))
    await vi.waitFor(async () => { expect((await askVerb(seeded.nc, { what: 'modules', state: 'pending' })).body).toMatchObject({ total: 1 }) })
  }, 30_000)

  test('serves the document at /asyncapi.json, of the version it runs', async () => {
    const res = await fetch(`${seeded.running.url}/asyncapi.json`)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    const { version } = await (await fetch(`${seeded.running.url}/healthz`)).json() as { version: string }
    expect(await res.text()).toBe(asyncApiText(version))
  })

  test.each([
    ['registry', { what: 'registry' }],
    ['needs', { what: 'needs', node: 'ace', limit: 3 }],
    ['applied', { what: 'applied' }],
    ['collect', { what: 'collect', collection: 'shell:zsh:normal' }],
    ['registry', { what: 'registry', by: 'kind' }],
    ['needs', { what: 'needs', by: 'node' }],
    ['applied', { what: 'applied', node: 'ace', by: 'module', limit: 2 }],
    ['collect', { what: 'collect', by: 'collection' }],
    ['nodes', { what: 'nodes' }],
    ['modules', { what: 'modules', state: 'pending' }]
  ])('the verb\'s %s request %j and its answer fit their messages', async (what, request) => {
    const op = `answer${what[0]?.toUpperCase()}${what.slice(1)}`
    fits(schemaOf(op, `${what}Request`), request, 'request')
    const reply = await askVerb(seeded.nc, request)
    expect(reply.code).toBe(200)
    // A list's request with `by` answers its facets: checked against the facets message, not the list's.
    expect(reply.body).toMatchObject('by' in request ? { what, by: request.by } : { what })
    fits(schemaOf(op, `${what}${'by' in request ? 'Facets' : 'Answer'}`, 'payload', true), reply.body, 'answer')
  })

  test.each([
    ['needs', 'collection'],
    ['applied', 'kind'],
    ['registry', 'node']
  ])('a %s request by %s, a field that bucket does not count, is outside its message as the verb refuses it', async (what, by) => {
    const request = { what, by }
    const validate = schemaOf(`answer${what[0]?.toUpperCase()}${what.slice(1)}`, `${what}Request`)
    expect(validate(request)).toBe(false)
    const reply = await askVerb(seeded.nc, request)
    expect(reply.code).toBe(400)
  })

  test('a refusal fits its message, headers and body', async () => {
    const msg = await seeded.nc.request('mesh-provisioner.provisioning', JSON.stringify({ what: 'needs', colour: 'red' }), { timeout: 5000 })
    const headers = Object.fromEntries(['Nats-Service-Error', 'Nats-Service-Error-Code'].map((h) => [h, msg.headers?.get(h)]))
    fits(schemaOf('answerNeeds', 'refusal', 'headers', true), headers, 'headers')
    fits(schemaOf('answerNeeds', 'refusal', 'payload', true), JSON.parse(msg.string()), 'body')
  })

  test.each(['PING', 'INFO', 'STATS'])('$SRV.%s answers fit their message', async (verb) => {
    const op = `discover${verb[0]}${verb.slice(1).toLowerCase()}`
    const msg = await seeded.nc.request(`$SRV.${verb}.mesh-provisioner`, '', { timeout: 5000 })
    fits(schemaOf(op, `${verb.toLowerCase()}Answer`, 'payload', true), JSONCodec().decode(msg.data), verb)
  })

  test('a stream\'s events fit their messages: the snapshot, a delete, and a reset', async () => {
    const events = await followed(`${seeded.running.url}/v1/needs/events?node=ace`, async () => {
      await seeded.nc.jetstream().views.kv('mesh-provisioner_needs').then(async (kv) => await kv.delete('ace.gitea.secret.db-password'))
    })
    expect(new Set(events.map((e) => e.event))).toEqual(new Set(['put', 'outOfShape', 'synced', 'delete', 'reset']))
    fitAll('followNeeds', events)
  })

  test.each(['nodes', 'modules'])('a live %s stream\'s events fit their messages: the snapshot, a put, a delete, and a reset', async (what) => {
    const applied = await seeded.nc.jetstream().views.kv('mesh-provisioner_applied')
    const events = await followed(`${seeded.running.url}/v1/${what}/events`, async () => {
      await applied.put(`zz-${what}.gitea`, '{}')
      await applied.delete(`zz-${what}.gitea`)
    })
    expect(new Set(events.map((e) => e.event))).toEqual(new Set(['put', 'synced', 'delete', 'reset']))
    fitAll(`follow${what[0]?.toUpperCase()}${what.slice(1)}`, events)
  })

  test('a stream\'s stale and live events fit their messages: NATS away and back', async () => {
    const stream = await openStream(`${seeded.running.url}/v1/applied/events?node=ace`)
    const synced = await untilEvent(stream, isSynced)
    await killAndRestart(seeded.server, { reconnecting: [seeded.running.nc], whileDown: async () => { await untilEvent(stream, (e) => e.event === 'stale', synced) } })
    await untilEvent(stream, (e) => e.event === 'live', synced)
    stream.close()
    for (const e of stream.events.filter((e) => e.event === 'stale' || e.event === 'live')) {
      const type = e.event as string
      fits(schemaOf('followApplied', type), JSON.parse(e.data), type)
      fits(schemaOf('followApplied', type, 'headers'), { event: type, ...(e.id === undefined ? {} : { id: e.id }) }, `${type} fields`)
    }
  })
})
