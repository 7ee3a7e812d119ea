// The console's first calls, typed by the gateway's contract (clients/typescript/openapi.ts, made
// from openapi/openapi.json by openapi-typescript): the registry, the overview and the pending
// modules, a node's needs, and its needs' event stream. openapi-fetch types every request and answer from the paths; the events' data are
// the AsyncAPI document's schemas (clients/typescript/asyncapi.ts). test/typed-client.test.ts type-checks this file, holds every answer
// type to no `unknown`, and runs it against a service.

import createClient from 'openapi-fetch'
import { createParser, type EventSourceMessage } from 'eventsource-parser'
import type { components as bus } from './asyncapi.js'
import type { components, JsonValue, paths } from './openapi.js'

type Schemas = components['schemas']
type Streams = bus['schemas']

/** The body of a route's 200 answer. */
export type Answer<P extends keyof paths> = paths[P]['get'] extends { responses: { 200: { content: { 'application/json': infer A } } } } ? A : never

/** Each event type of a needs stream and its data (docs/following-changes.md). */
export interface NeedsEvents {
  put: Streams['NeedsEntry']
  outOfShape: Streams['OutOfShape']
  delete: NonNullable<Streams['NeedsAnswer']['deleted']>[number]
  synced: Streams['SyncedEvent']
  stale: Streams['StaleEvent']
  live: Streams['LiveEvent']
  reset: Streams['ResetEvent']
}
export type NeedsEvent = { [T in keyof NeedsEvents]: { type: T, id: string | undefined, data: NeedsEvents[T] } }[keyof NeedsEvents]

/** A gateway client; `token` when the gateway asks for one (HTTP_TOKENS_FILE). */
export function consoleClient (gateway: string, token?: string) {
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` }
  const api = createClient<paths>({ baseUrl: gateway, headers })
  const fail = (what: string, error: Schemas['ErrorBody'] | undefined): never => { throw new Error(`${what}: ${error?.error.code ?? 'no answer'} ${error?.error.message ?? ''}`) }
  return {
    /** Which domain answers which kind of placeholder. */
    async registry (): Promise<Answer<'/v1/registry'>> {
      const { data, error } = await api.GET('/v1/registry')
      return data ?? fail('GET /v1/registry', error)
    },

    /** What one node's modules need, a page at a time (`after` = the `next` of the page before). */
    async needsOf (node: string, after?: string): Promise<Answer<'/v1/needs'>> {
      const { data, error } = await api.GET('/v1/needs', { params: { query: { node: [node], ...(after === undefined ? {} : { after }) } } })
      return data ?? fail('GET /v1/needs', error)
    },

    /** One need of a node's module. */
    async need (node: string, module: string, kind: string, name: string): Promise<Answer<'/v1/needs/{node}/{module}/{kind}/{name}'>> {
      const { data, error } = await api.GET('/v1/needs/{node}/{module}/{kind}/{name}', { params: { path: { node, module, kind, name } } })
      return data ?? fail('GET /v1/needs/{node}/{module}/{kind}/{name}', error)
    },

    /** The mesh at a glance: a row per node, with its modules per state (`after` = the `next` of the page before). */
    async overview (after?: string): Promise<Answer<'/v1/nodes'>> {
      const { data, error } = await api.GET('/v1/nodes', { params: { query: after === undefined ? {} : { after } } })
      return data ?? fail('GET /v1/nodes', error)
    },

    /** What is not applied yet, anywhere: a row per module with a need written after its applied entry. */
    async pendingModules (after?: string): Promise<Answer<'/v1/modules'>> {
      const { data, error } = await api.GET('/v1/modules', { params: { query: { state: ['pending'], ...(after === undefined ? {} : { after }) } } })
      return data ?? fail('GET /v1/modules', error)
    },

    /** A node's needs live: every event of the stream, typed, until `signal` aborts. */
    async * followNeeds (node: string, signal: AbortSignal): AsyncGenerator<NeedsEvent> {
      const url = new URL('/v1/needs/events', gateway)
      url.searchParams.set('node', node)
      const res = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' }, signal })
      if (res.status !== 200 || res.body === null) fail('GET /v1/needs/events', await res.json() as Schemas['ErrorBody'])
      const received: EventSourceMessage[] = []
      const parser = createParser({ onEvent: (e) => received.push(e) })
      const text = new TextDecoderStream()
      for await (const chunk of (res.body as ReadableStream<Uint8Array>).pipeThrough(text)) {
        parser.feed(chunk)
        for (const e of received.splice(0)) yield { type: e.event, id: e.id, data: JSON.parse(e.data) } as NeedsEvent
      }
    }
  }
}

/** What a console shows of one need: its writer's value is JSON, whatever its shape. */
export function describeNeed (entry: Schemas['NeedsEntry']): string {
  const value: JsonValue | undefined = entry.value
  return `${entry.node}/${entry.module} needs ${entry.kind} ${entry.name}: ${value === undefined ? `(${entry.problem ?? 'no value'})` : JSON.stringify(value)}`
}

/** What a console shows of one module on a node: its state, and when its needs and its applied entry were written. */
export function describeModule (row: Schemas['ModuleRow']): string {
  const applied = row.applied === null ? 'never applied' : `applied ${row.applied.updated} (revision ${row.applied.revision})`
  return `${row.node}/${row.module} ${row.state}: ${row.needs} needs, last written ${row.needsUpdated ?? 'never'}, ${applied}`
}
