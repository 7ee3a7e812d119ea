// The change feed of docs/following-changes.md as Server-Sent Events: `GET /v1/{what}/events?<filters>`, its schema
// and its prose, and the live rows of the mesh at a glance (`GET /v1/nodes/events`,
// `GET /v1/modules/events`, docs/glance.md) on the same streams, bounds and shares. Opening a
// stream is streams.ts'; the framing, sse.ts'; following the request, stream-of-request.ts' (the
// rows' source is row-source.ts).

import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Type } from '../../vendor/typebox.js'
import { BUCKETS, WHATS, shapeOf, type What } from '../../domain/wire/key-shapes.js'
import { badRequest, ProvisionerError } from '../../domain/wire/errors.js'
import type { Provisioning } from '../../domain/answers/provisioning.js'
import { readOverviewParameters, readParameters, type OverviewRequest, type BucketRequest } from '../../domain/wire/request.js'
import { NARROWED_BY, OVERVIEWS, type Overview } from '../../domain/wire/schemas.js'
import { accessOf } from '../access.js'
import { parameterOf } from '../schemas.js'
import { INTERNAL_EXAMPLE, refusal } from '../examples.js'
import { RETRY_AFTER_S } from '../holds.js'
import { RETRY_MS, type EventType } from '../sse.js'
import { StreamFollower, StreamOfRequest, type FollowedViews, type StreamSource } from '../stream-of-request.js'
import { RowSource } from '../row-source.js'
import { openStream, streamGateway, type StreamsDeps } from '../streams.js'

export interface EventsDeps extends StreamsDeps {
  provisioning: Provisioning
  /** What a stream asks of the views beside Provisioning. */
  views: FollowedViews
}

/** The parameters a stream takes beside its filters. */
const STREAM_PARAMETERS = ['lastEventId', 'access_token']
/** The list route's parameters that a stream does not take. */
const NOT_HERE = ['after', 'limit', 'since', 'wait']

/**
 * Reads a stream's query string (as fastify parses it) and its Last-Event-ID header into the
 * request it follows and the cursor it resumes from; the header wins over `lastEventId`.
 * `access_token` is the transport's (access.ts reads it) and is not a filter.
 */
function readStream<W extends What | Overview> (what: W, parameters: Record<string, unknown>, header: unknown): { followed: W extends What ? BucketRequest : OverviewRequest, resume: string | undefined } {
  const where = `GET /v1/${what}/events`
  const takes = [...NARROWED_BY[what], ...STREAM_PARAMETERS]
  const { lastEventId, access_token: _token, ...filters } = parameters
  for (const name of Object.keys(filters)) {
    if (NOT_HERE.includes(name)) {
      throw badRequest(name, `"${name}" is not a parameter of ${where}; it takes ${takes.join(', ')}: the stream sends every matching entry, then each change, and resumes from Last-Event-ID (or lastEventId=)`)
    }
  }
  const followed = ((OVERVIEWS as readonly string[]).includes(what) ? readOverviewParameters(what as Overview, filters, where, takes) : readParameters(what as What, filters, where, takes)) as W extends What ? BucketRequest : OverviewRequest
  if (lastEventId !== undefined && typeof lastEventId !== 'string') {
    throw badRequest('lastEventId', 'lastEventId is given more than once; give the id of the last event received, once')
  }
  const given = typeof header === 'string' && header !== '' ? header : lastEventId
  return { followed, resume: given === '' ? undefined : given }
}

const EVENT_DATA = {
  put: 'an entry, as in answers (`{"key",…fields,"value"|"raw"|"rawBase64","problem"?,"revision","updated"}`)',
  outOfShape: 'an out-of-shape key the filter keeps (`{"key","revision","reason"}`)',
  synced: '`{"cursor","total","stale"}`: the snapshot or the missed changes are complete; `total` counts every matching entry now',
  delete: '`{"key",…fields,"revision"}` of a key deleted or purged (an out-of-shape key\'s has `key` and `revision` alone)',
  stale: '`{"reason"}`: cut off from NATS, the bucket missing or loading, or being read again; the stream goes on (or its snapshot follows) when it can',
  live: '`{"reason"}`: followed live again after `stale`',
  reset: '`{"reason"}`: the cursor cannot be served (malformed, another generation of the bucket, or older than the deletions known) or the bucket was created again: forget what was received, a fresh snapshot and `synced` follow (its `id:` is empty)'
} satisfies Record<EventType, string>

const STREAM_EXAMPLE = [
  `retry: ${RETRY_MS}`,
  '',
  'event: put',
  'data: {"key":"ace.gitea.secret.db-password","node":"ace","module":"gitea","kind":"secret","name":"db-password","value":{"owner":65534},"revision":1,"updated":"2026-11-29T09:40:00.000Z"}',
  '',
  'id: 187-1795945200123456789',
  'event: synced',
  'data: {"cursor":"187-1795945200123456789","total":1,"stale":false}',
  '',
  'id: 188-1795945200123456789',
  'event: delete',
  'data: {"key":"ace.gitea.secret.db-password","node":"ace","module":"gitea","kind":"secret","name":"db-password","revision":188}',
  '',
  ''
].join('\n')

/** The stream route's query string, for the OpenAPI document. */
function streamQuerystring (what: What | Overview) {
  const properties: Record<string, ReturnType<typeof Type.Optional>> = {}
  for (const field of NARROWED_BY[what]) properties[field] = Type.Optional(parameterOf(field))
  properties['lastEventId'] = Type.Optional(Type.String({
    description: 'Resume after this event id (the cursor of the last event received), for a client that cannot send the `Last-Event-ID` header; the header wins. An id that cannot be served is answered by `reset` and a fresh snapshot.',
    examples: ['1234-1795945200123456789']
  }))
  properties['access_token'] = Type.Optional(Type.String({
    description: "The bearer token, for a browser's EventSource, which cannot set headers (when the gateway asks for tokens).",
    examples: ['mpt_example']
  }))
  return Type.Object(properties, { additionalProperties: false })
}

/** The event streams, a plugin of their own: their streams, hooks and shared reads are theirs. */
export const events = fp<EventsDeps>(async (app, deps) => { registerEvents(app, deps) }, { name: 'events', fastify: '5.x', dependencies: ['access'], encapsulate: true })

function registerEvents (app: FastifyInstance, deps: EventsDeps): void {
  const gateway = streamGateway(app, deps)
  for (const what of WHATS) {
    app.get(`/v1/${what}/events`, { config: accessOf(what), schema: streamRouteSchema(what) }, async (request, reply) => {
      const { followed, resume } = readStream(what, request.query as Record<string, unknown>, request.headers['last-event-id'])
      await openStream(gateway, request, reply, (sse) => new StreamOfRequest(deps, gateway.reads, sse, followed, resume))
    })
  }
  for (const what of OVERVIEWS) {
    app.get(`/v1/${what}/events`, { schema: rowStreamRouteSchema(what) }, async (request, reply) => {
      const { followed, resume } = readStream(what, request.query as Record<string, unknown>, request.headers['last-event-id'])
      const source: StreamSource = new RowSource(deps, followed)
      await openStream(gateway, request, reply, (sse) => new StreamFollower(source, gateway.reads, sse, resume))
    })
  }
}

/** The stream route's schema: the OpenAPI document's words for it. */
function streamRouteSchema (what: What) {
  return {
    tags: ['provisioning'],
    operationId: `follow${what[0]?.toUpperCase()}${what.slice(1)}`,
    summary: `Follow ${what} live: Server-Sent Events.`,
    description: `The change feed of bucket \`${BUCKETS[what]}\` (keys \`${shapeOf(what)}\`) narrowed by the list's filters, as Server-Sent Events ` +
      '(`EventSource` in a browser, `curl -N`). First `retry:`, then one `put` per matching entry and one `outOfShape` per out-of-shape key the filter keeps, ' +
      'then `synced`; afterwards `put`, `delete` and `outOfShape` for each matching change in revision order (a key changed again before the stream read it is sent once, at its latest change), ' +
      'and `stale`/`live` when the view\'s state changes. ' +
      'Every event after the snapshot, and `synced`, has an `id:` that is its cursor: a client that reconnects with `Last-Event-ID` (or `lastEventId=`) ' +
      'receives the changes it missed, latest per key, deletions included, then `synced`, or `reset` and a fresh snapshot when that cursor cannot be served. ' +
      'A comment line every 15 s keeps it alive; a client too slow to read is disconnected (it resumes by its last id). ' +
      'A request that can be served is always answered 200, even while the bucket is missing or loading (said by `stale`).',
    querystring: streamQuerystring(what),
    response: {
      200: {
        description: 'The event stream. Events and their `data:` (JSON):\n' +
          Object.entries(EVENT_DATA).map(([type, data]) => `- \`${type}\`: ${data}`).join('\n'),
        headers: {
          'Cache-Control': Type.String({ description: '`no-cache`.' }),
          'X-Accel-Buffering': Type.String({ description: '`no`: a proxy in front passes events on at once.' })
        },
        content: { 'text/event-stream': { schema: Type.String({ description: 'Server-Sent Events, UTF-8.' }), example: STREAM_EXAMPLE } }
      },
      400: {
        description: 'A parameter that the route does not take, or a value that will not do; the message names it and what would have worked.',
        content: { 'application/json': { schema: Type.Ref('ErrorBody'), example: refusal(() => readStream('needs', { since: '1234-1795945200123456789' }, undefined)) } }
      },
      500: { description: 'The service failed to answer; the fault is logged.', content: { 'application/json': { schema: Type.Ref('ErrorBody'), example: INTERNAL_EXAMPLE } } },
      503: {
        description: `This instance holds as many streams as HTTP_MAX_STREAMS allows and this caller holds its even share of them; try again after \`Retry-After\` seconds (${RETRY_AFTER_S}).`,
        headers: { 'Retry-After': Type.String({ description: 'Seconds to wait before trying again.' }) },
        content: { 'application/json': { schema: Type.Ref('ErrorBody'), example: new ProvisionerError('NOT_READY', `this instance holds 1000 event streams, its most (HTTP_MAX_STREAMS), and this caller holds 1000 of an even share of 1000; try again in ${RETRY_AFTER_S} s or ask another instance`).toBody() } }
      }
    }
  }
}

const ROW_EVENT_DATA: Record<Overview, Partial<Record<EventType, string>>> = {
  nodes: {
    put: 'a node row, as in `GET /v1/nodes` (`{"node","needs","applied","collect","outOfShape","updated","modules","waiting","waitingSince","unanswered"}`)',
    delete: '`{"node"}` of a row the filter no longer keeps: no key names the node any more (a client ignores one for a row it does not hold)'
  },
  modules: {
    put: 'a module row, as in `GET /v1/modules` (`{"node","module","needs","needsUpdated","applied","state","waiting","waitingSince","unanswered"}`)',
    delete: '`{"node","module"}` of a row the filter no longer keeps: neither needs nor applied holds the module any more, or its state left those `state` takes (a client ignores one for a row it does not hold)'
  }
}

const ROW_STREAM_EXAMPLE: Record<Overview, string> = {
  nodes: [
    `retry: ${RETRY_MS}`, '',
    'event: put',
    'data: {"node":"ace","needs":4,"applied":3,"collect":3,"outOfShape":0,"updated":"2026-11-29T09:40:00.000Z","modules":{"applied":1,"pending":1,"unapplied":1,"orphaned":0},"waiting":3,"waitingSince":"2026-11-29T09:12:00.000000001Z","unanswered":1}', '',
    'id: 187.40.1234.13-Ab3dE5gH7jK9mN1p',
    'event: synced',
    'data: {"cursor":"187.40.1234.13-Ab3dE5gH7jK9mN1p","total":1,"stale":false}', '',
    'id: 188.40.1234.13-Ab3dE5gH7jK9mN1p',
    'event: delete',
    'data: {"node":"ace"}', '', ''
  ].join('\n'),
  modules: [
    `retry: ${RETRY_MS}`, '',
    'event: put',
    'data: {"node":"ace","module":"gitea","needs":4,"needsUpdated":"2026-11-29T09:41:12.345678901Z","applied":{"revision":12,"updated":"2026-11-29T09:40:00.123456789Z"},"state":"pending","waiting":1,"waitingSince":"2026-11-29T09:41:12.345678901Z","unanswered":0}', '',
    'id: 187.40.13-Ab3dE5gH7jK9mN1p',
    'event: synced',
    'data: {"cursor":"187.40.13-Ab3dE5gH7jK9mN1p","total":1,"stale":false}', '',
    'id: 189.41.13-Ab3dE5gH7jK9mN1p',
    'event: delete',
    'data: {"node":"ace","module":"gitea"}', '', ''
  ].join('\n')
}

/** The live rows' route schema: the OpenAPI document's words for it. */
function rowStreamRouteSchema (what: Overview) {
  const base = streamRouteSchema('needs')
  const data = { ...EVENT_DATA, ...ROW_EVENT_DATA[what], synced: '`{"cursor","total","stale"}`: the snapshot or the missed rows are complete; `total` counts every row the filter keeps now' } as Record<string, string>
  delete data['outOfShape']
  return {
    ...base,
    tags: ['at a glance'],
    operationId: `follow${what[0]?.toUpperCase()}${what.slice(1)}`,
    summary: `Follow the ${what} rows live: Server-Sent Events.`,
    description: `The rows of \`GET /v1/${what}\` that the filter keeps, live, as Server-Sent Events (\`EventSource\` in a browser, \`curl -N\`). ` +
      'First `retry:`, then one `put` per row, then `synced`; afterwards a `put` when a row the filter keeps appears or changes and a `delete` when one leaves the filter, ' +
      'latest per row (a row changed several times before the stream writes it is sent once), and `stale`/`live` when a view\'s state changes. ' +
      'Every event after the snapshot, and `synced`, has an `id:`, an opaque cursor naming the point of every bucket the rows read (and of the registry, whose kinds `unanswered` reads): ' +
      'a client that reconnects with `Last-Event-ID` (or `lastEventId=`) receives the rows that changed or left since, then `synced`, or `reset` and a fresh snapshot when that id cannot be served or a bucket was created again. ' +
      'A write costs the rows it touches, whatever the size of the mesh. A comment line every 15 s keeps it alive; a client too slow to read is disconnected (it resumes by its last id). ' +
      'A request that can be served is always answered 200, even while a bucket is missing or loading (said by `stale`). HTTP only: the bus answers requests, not streams.',
    querystring: streamQuerystring(what),
    response: {
      ...base.response,
      200: {
        ...base.response[200],
        description: 'The event stream. Events and their `data:` (JSON):\n' + Object.entries(data).map(([type, words]) => `- \`${type}\`: ${words}`).join('\n'),
        content: { 'text/event-stream': { schema: Type.String({ description: 'Server-Sent Events, UTF-8.' }), example: ROW_STREAM_EXAMPLE[what] } }
      },
      400: {
        description: 'A parameter that the route does not take, or a value that will not do; the message names it and what would have worked.',
        content: { 'application/json': { schema: Type.Ref('ErrorBody'), example: refusal(() => readStream('modules', { state: 'done' }, undefined)) } }
      }
    }
  }
}
