// A model test of following changes (docs/following-changes.md) against a real nats-server: random puts, deletes and
// purges on a small key space (an out-of-shape key among them), a cursor taken at a random point,
// then `since` over HTTP and on the verb, and an event stream resumed by Last-Event-ID, must each
// say exactly what the model says changed after it: the latest change of every key touched,
// deletions included, in revision order, and nothing else.

import fc from 'fast-check'
import type { KV, NatsConnection } from 'nats'
import { request } from './support/http.js'
import { beforeAll, expect, test, vi } from 'vitest'
import type { Running } from '../src/service.js'
import { createClientBuckets } from '../testkit/sample-mesh.js'
import { suiteFixture, untilReady } from './support/service.js'
import { isSynced, openStream, untilEvent } from './support/sse.js'
import { askVerb } from './support/verb.js'

const KEYS = ['a.x', 'a.y', 'b.x', 'b.y', 'a.x.odd']
type Op = { op: 'put', key: string, value: number } | { op: 'delete' | 'purge', key: string }
/** One change as every face reports it: its type, key and value (null for a deletion). */
type Said = [type: string, key: string, value: unknown]

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('put' as const), key: fc.constantFrom(...KEYS), value: fc.integer({ min: 0, max: 99 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('delete' as const, 'purge' as const), key: fc.constantFrom(...KEYS) }) }
)

const fx = suiteFixture()
let nc: NatsConnection
let running: Running
let kv: KV

beforeAll(async () => {
  const server = await fx.server()
  nc = await fx.admin(server)
  kv = (await createClientBuckets(nc)).applied
  running = await fx.service(server)
  await untilReady(running)
})

/** Applies `ops` and waits until the service has read them; gives the revision each key was last touched at. */
async function apply (ops: Op[]): Promise<void> {
  let last = 0
  for (const o of ops) {
    if (o.op === 'put') last = await kv.put(o.key, JSON.stringify(o.value))
    else {
      await (o.op === 'delete' ? kv.delete(o.key) : kv.purge(o.key))
      last = (await kv.status()).streamInfo.state.last_seq
    }
  }
  await vi.waitFor(() => expect(running.views.status().applied.revision).toBeGreaterThanOrEqual(last), { timeout: 5000, interval: 10 })
}

/** What changed according to the model: each key touched by `ops`, at its last touch, in that order. */
function expected (ops: Op[], node: string | undefined): Said[] {
  const last = new Map<string, Op>()
  for (const o of ops) {
    last.delete(o.key)
    last.set(o.key, o)
  }
  return [...last.values()]
    .filter((o) => node === undefined || o.key.startsWith(`${node}.`))
    .map((o) => o.op === 'put' ? [o.key.split('.').length === 2 ? 'put' : 'outOfShape', o.key, o.key.split('.').length === 2 ? o.value : null] : ['delete', o.key, null])
}

interface SinceAnswer {
  entries: Array<{ key: string, value: unknown, revision: number }>
  deleted: Array<{ key: string, revision: number }>
  outOfShape: Array<{ key: string, revision: number }>
}

function saidBy (answer: SinceAnswer): Said[] {
  const all: Array<[number, Said]> = [
    ...answer.entries.map((e): [number, Said] => [e.revision, ['put', e.key, e.value]]),
    ...answer.deleted.map((e): [number, Said] => [e.revision, ['delete', e.key, null]]),
    ...answer.outOfShape.map((e): [number, Said] => [e.revision, ['outOfShape', e.key, null]])
  ]
  return all.sort((x, y) => x[0] - y[0]).map(([, said]) => said)
}

test('since (HTTP and verb) and a resumed event stream say exactly what the model says changed after the cursor', async () => {
  await fc.assert(fc.asyncProperty(
    fc.array(op, { maxLength: 10 }),
    fc.array(op, { maxLength: 10 }),
    fc.constantFrom(undefined, 'a'),
    async (before, after, node) => {
      await apply(before)
      const filter = node === undefined ? '' : `node=${node}`
      const { cursor } = await (await request(`${running.url}/v1/applied?${filter}`)).body.json() as { cursor: string }
      await apply(after)
      const want = expected(after, node)

      const http = await request(`${running.url}/v1/applied?${filter}&since=${cursor}&limit=10000`)
      const text = await http.body.text()
      expect(http.statusCode, text).toBe(200)
      expect(saidBy(JSON.parse(text) as SinceAnswer)).toEqual(want)
      const verb = await askVerb(nc, { what: 'applied', since: cursor, limit: 10000, ...(node === undefined ? {} : { node }) })
      expect(verb.code).toBe(200)
      expect(saidBy(verb.body as SinceAnswer)).toEqual(want)

      const stream = await openStream(`${running.url}/v1/applied/events?${filter}`, { 'last-event-id': cursor })
      try {
        const synced = await untilEvent(stream, isSynced)
        const events = stream.events.slice(0, synced)
        expect(events.map((e): Said => {
          const data = JSON.parse(e.data) as { key: string, value?: unknown }
          return [e.event, data.key, e.event === 'put' ? data.value : null]
        })).toEqual(want)
        expect(events.every((e) => /^\d+-\d+$/.test(e.id ?? ''))).toBe(true)
      } finally {
        stream.close()
      }
    }
  ), { numRuns: 30 })
}, 120_000)
