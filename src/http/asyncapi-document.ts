// The AsyncAPI 3 document of the faces that are not request/response HTTP: the verb on the bus,
// micro discovery, and the event streams (GET /v1/{what}/events). Built from the same typebox
// schemas as the OpenAPI document; the requests and the streams come from the schemas' own maps,
// so a request added there is described here without a word changed. Committed as
// asyncapi/asyncapi.json (`npm run openapi` writes it; a test fails when it drifts).

import type { TSchema } from 'typebox'
import { Type } from '../vendor/typebox.js'
import { MICRO_CODE } from '../bus/errors.js'
import { InfoAnswer, PingAnswer, StatsAnswer } from '../bus/discovery.js'
import { BUCKETS, WHATS, shapeOf, type What } from '../domain/wire/key-shapes.js'
import { Answers, BY_DESCRIPTION, EntrySchemas, ErrorBody, FACET_BY, Facets, literals, NARROWED_BY, OutOfShape, OVERVIEWS, requestFields, RequestFields, type RequestField } from '../domain/wire/schemas.js'
import { eventData, Live, Reset, rowEventData, Stale, Synced, type StreamEvent } from './event-schemas.js'

/** The verb's subject and queue group as the service serves them by default (PROVISIONING_SUBJECT moves the subject). */
export const VERB_SUBJECT = 'mesh-provisioner.provisioning'
const QUEUE = 'mesh-provisioner'

type Json = Record<string, unknown>

const ref = (path: string): Json => ({ $ref: path })
const capital = (word: string): string => `${word[0]?.toUpperCase() ?? ''}${word.slice(1)}`

/** A typebox schema as plain JSON Schema, without its `$id` (components name it instead). */
function plain (schema: TSchema): Json {
  const { $id: _id, ...rest } = JSON.parse(JSON.stringify(schema)) as Json
  return rest
}

const isBucket = (what: string): what is What => Object.hasOwn(BUCKETS, what)

/** The verb's request of one `what` and the fields that `what` takes (a bucket's list also takes `by`, for its facets). */
function requestOf (what: string, fields: readonly RequestField[]): TSchema {
  const literal = Type.Literal(what, { description: what === 'registry' ? 'What is asked: `registry` (the default: an empty payload asks it).' : `What is asked: \`${what}\`.` })
  const properties: Record<string, TSchema> = { what: what === 'registry' ? Type.Optional(literal) : literal }
  // The verb's own field schemas (ProvisioningRequest is made of them): the document takes what its check takes.
  for (const field of fields) properties[field] = Type.Optional(RequestFields[field])
  // `by` narrowed to the fields this bucket counts (the verb refuses the others, naming these).
  if (isBucket(what)) properties['by'] = Type.Optional(literals(what === 'collect' ? [...FACET_BY[what], 'module'] : FACET_BY[what], { description: BY_DESCRIPTION, examples: [FACET_BY[what][0]] }))
  const facets = isBucket(what) ? ` With \`by\` the answer is the facets (${capital(what)}Facets) instead of the entries; \`by\` does not combine with \`since\`.` : ''
  return Type.Object(properties, { additionalProperties: false, description: `A request for ${what}. A field at its type's zero value (\`""\`, \`null\`, \`0\`, \`[]\`) counts as not given.${facets}` })
}

/** The micro error headers every refusal carries, with the codes the verb answers. */
const ERROR_HEADERS = Type.Object({
  'Nats-Service-Error': Type.String({ description: 'The refusal in words (the body\'s `error.message`).' }),
  'Nats-Service-Error-Code': Type.Union([...new Set(Object.values(MICRO_CODE))].sort().map((c) => Type.Literal(String(c))), {
    description: '400 a bad request, 410 a cursor expired, 503 not ready or the bucket missing, 500 a failure.'
  })
}, { description: 'The micro protocol\'s error headers.' })

/** The event types of a stream, each with its data's schema (by what it streams). */
function streamMessages (what: What): Record<StreamEvent, { schema: Json, id: string }> {
  const deleted = eventData(what).delete
  const cursorId = 'its cursor: resume after it with `Last-Event-ID`'
  return {
    put: { schema: ref(`#/components/schemas/${capital(what)}Entry`), id: `absent during the snapshot; afterwards ${cursorId}` },
    outOfShape: { schema: ref('#/components/schemas/OutOfShape'), id: `absent during the snapshot; afterwards ${cursorId}` },
    delete: { schema: plain(deleted), id: cursorId },
    synced: { schema: ref('#/components/schemas/SyncedEvent'), id: cursorId },
    stale: { schema: ref('#/components/schemas/StaleEvent'), id: 'absent' },
    live: { schema: ref('#/components/schemas/LiveEvent'), id: 'absent' },
    reset: { schema: ref('#/components/schemas/ResetEvent'), id: 'empty: a browser forgets the id it held' }
  }
}

/** The SSE fields of an event beside `data:`, as the message's headers. */
function sseFields (type: string, id: string): Json {
  return plain(Type.Object({
    event: Type.Literal(type, { description: 'The `event:` line.' }),
    id: Type.Optional(Type.String({ description: `The \`id:\` line: ${id}.` }))
  }, { description: 'The event\'s Server-Sent Events fields beside `data:` (which is the payload, one JSON document).' }))
}

/** The document's four maps, filled channel by channel (their keys' order is the document's). */
interface Parts { schemas: Json, messages: Json, channels: Json, operations: Json }

/** The `query` binding of a stream: the filters it is narrowed by. */
function streamQuery (what: keyof typeof NARROWED_BY, description: string): Json {
  const filters: Record<string, TSchema> = {}
  for (const field of NARROWED_BY[what]) filters[field] = Type.Optional(RequestFields[field])
  return { http: { method: 'GET', query: plain(Type.Object(filters, { additionalProperties: false, description })), bindingVersion: '0.3.0' } }
}

/** The verb's messages, one request and one answer for each `what` (and a bucket's facets); returns them by the channel that carries them. */
function verbMessages ({ schemas, messages }: Parts, whats: ReadonlyArray<keyof typeof Answers>): { asked: Json, answered: Json } {
  const asked: Json = {}
  const answered: Json = {}
  for (const what of whats) {
    const name = capital(what)
    schemas[`${name}Request`] = plain(requestOf(what, requestFields(what)))
    schemas[`${name}Answer`] = plain(Answers[what])
    messages[`${what}Request`] = { name: `${what}Request`, title: `Ask ${what}`, contentType: 'application/json', payload: ref(`#/components/schemas/${name}Request`) }
    messages[`${what}Answer`] = { name: `${what}Answer`, title: `The ${what} answer`, contentType: 'application/json', payload: ref(`#/components/schemas/${name}Answer`) }
    asked[`${what}Request`] = ref(`#/components/messages/${what}Request`)
    answered[`${what}Answer`] = ref(`#/components/messages/${what}Answer`)
    if (!isBucket(what)) continue
    schemas[`${name}Facets`] = plain(Facets[what])
    messages[`${what}Facets`] = { name: `${what}Facets`, title: `The ${what} facets`, summary: 'The answer to the list\'s request with `by`.', contentType: 'application/json', payload: ref(`#/components/schemas/${name}Facets`) }
    answered[`${what}Facets`] = ref(`#/components/messages/${what}Facets`)
  }
  messages['refusal'] = {
    name: 'refusal',
    title: 'A refusal or a failure',
    summary: 'Every refusal and failure, with the micro error headers; counted in $SRV.STATS (`num_errors`, `last_error`).',
    contentType: 'application/json',
    headers: plain(ERROR_HEADERS),
    payload: ref('#/components/schemas/ErrorBody')
  }
  answered['refusal'] = ref('#/components/messages/refusal')
  return { asked, answered }
}

/** The verb: one channel for the requests, one for the replies (the requester's inbox). */
function addVerb (parts: Parts): void {
  const { channels, operations } = parts
  const whats = Object.keys(Answers) as Array<keyof typeof Answers>
  const { asked, answered } = verbMessages(parts, whats)
  channels['provisioning'] = {
    address: VERB_SUBJECT,
    title: 'The verb',
    description: `Requests to mesh-provisioner (PROVISIONING_SUBJECT moves the subject). A JSON object naming \`what\` (${whats.map((w) => `\`${w}\``).join(', ')}) and the fields that request takes; an empty payload asks the registry. A field that does not apply, an unknown field or a wrong type is refused naming it.`,
    servers: [ref('#/servers/nats')],
    messages: asked
  }
  channels['provisioningReply'] = {
    address: null,
    title: 'The verb\'s replies',
    description: 'The requester\'s reply subject (its inbox): every request gets one reply, the answer or a refusal.',
    servers: [ref('#/servers/nats')],
    messages: answered
  }
  for (const what of whats) {
    operations[`answer${capital(what)}`] = {
      action: 'receive',
      title: `Answer ${what}`,
      summary: `Answers a request for ${what}${isBucket(what) ? ` (bucket \`${BUCKETS[what]}\`)` : ''}; the HTTP gateway answers the same document.`,
      channel: ref('#/channels/provisioning'),
      messages: [ref(`#/channels/provisioning/messages/${what}Request`)],
      bindings: { nats: { queue: QUEUE, bindingVersion: '0.1.0' } },
      reply: { channel: ref('#/channels/provisioningReply'), messages: [`${what}Answer`, ...(isBucket(what) ? [`${what}Facets`] : []), 'refusal'].map((m) => ref(`#/channels/provisioningReply/messages/${m}`)) }
    }
  }
}

/** Discovery: the micro protocol's control subjects, each answered with an empty request. */
function addDiscovery ({ messages, channels, operations }: Parts): void {
  const discovery = { PING: PingAnswer, INFO: InfoAnswer, STATS: StatsAnswer }
  for (const verb of Object.keys(discovery) as Array<keyof typeof discovery>) {
    const name = `${verb[0]}${verb.slice(1).toLowerCase()}`
    messages[`discovery${name}Request`] = { name: `discovery${name}Request`, title: `$SRV.${verb}`, summary: 'An empty payload.', payload: plain(Type.Null({ description: 'Nothing: the request is empty.' })) }
    messages[`${name.toLowerCase()}Answer`] = { name: `${name.toLowerCase()}Answer`, title: `The ${verb} answer`, contentType: 'application/json', payload: ref(`#/components/schemas/${name}Answer`) }
    channels[`discovery${name}`] = {
      address: `$SRV.${verb}`,
      title: `Discovery: ${verb}`,
      description: `Micro v1 discovery, answered by every instance once its views are read (also on \`$SRV.${verb}.mesh-provisioner\` and \`$SRV.${verb}.mesh-provisioner.<id>\`).`,
      servers: [ref('#/servers/nats')],
      messages: { [`discovery${name}Request`]: ref(`#/components/messages/discovery${name}Request`) }
    }
    channels[`discovery${name}Reply`] = {
      address: null,
      title: `Discovery: ${verb} replies`,
      description: 'The requester\'s reply subject; every instance replies.',
      servers: [ref('#/servers/nats')],
      messages: { [`${name.toLowerCase()}Answer`]: ref(`#/components/messages/${name.toLowerCase()}Answer`) }
    }
    operations[`discover${name}`] = {
      action: 'receive',
      title: `Answer $SRV.${verb}`,
      channel: ref(`#/channels/discovery${name}`),
      messages: [ref(`#/channels/discovery${name}/messages/discovery${name}Request`)],
      reply: { channel: ref(`#/channels/discovery${name}Reply`), messages: [ref(`#/channels/discovery${name}Reply/messages/${name.toLowerCase()}Answer`)] }
    }
  }
}

/** The event streams: one channel for each bucket, one message for each event type. */
function addBucketStreams ({ schemas, channels, operations }: Parts): void {
  for (const what of WHATS) {
    const name = capital(what)
    schemas[`${name}Entry`] = plain(EntrySchemas[what])
    const events = streamMessages(what)
    const channelMessages: Json = {}
    for (const [type, { schema, id }] of Object.entries(events)) {
      channelMessages[type] = {
        name: type,
        title: `${type} (${what})`,
        contentType: 'application/json',
        headers: sseFields(type, id),
        payload: schema
      }
    }
    channels[`${what}Events`] = {
      address: `/v1/${what}/events`,
      title: `${name} events`,
      description: `GET /v1/${what}/events: the change feed of bucket \`${BUCKETS[what]}\` (keys \`${shapeOf(what)}\`) as Server-Sent Events, narrowed by the list's filters. ` +
        'First `retry:`, then a `put` per matching entry and an `outOfShape` per out-of-shape key, then `synced`; afterwards `put`, `delete` and `outOfShape` for each matching change in revision order, ' +
        'and `stale`/`live` when the view\'s state changes. Every event after the snapshot, and `synced`, has an `id:` that is its cursor: a client that reconnects with `Last-Event-ID` ' +
        '(or `lastEventId=`) receives what it missed, then `synced`, or `reset` and a fresh snapshot when that cursor cannot be served. The OpenAPI document describes its refusals.',
      servers: [ref('#/servers/gateway')],
      messages: channelMessages
    }
    operations[`follow${name}`] = {
      action: 'send',
      title: `Follow ${what}`,
      summary: `Sends ${what}'s events to a client that opened the stream.`,
      channel: ref(`#/channels/${what}Events`),
      messages: Object.keys(events).map((type) => ref(`#/channels/${what}Events/messages/${type}`)),
      bindings: streamQuery(what, 'The list\'s filters (and `lastEventId`, `access_token`: see the OpenAPI document).')
    }
  }
}

/** The live rows: one channel for each kind of row, a put and a delete message for it. */
function addRowStreams ({ channels, operations }: Parts): void {
  for (const what of OVERVIEWS) {
    const name = capital(what)
    const data = rowEventData(what)
    const rowId = 'absent during the snapshot; afterwards an opaque cursor over every bucket the rows read: resume after it with `Last-Event-ID`'
    const ids: Record<keyof typeof data, string> = { put: rowId, delete: rowId, synced: 'the cursor', stale: 'absent', live: 'absent', reset: 'empty: a browser forgets the id it held' }
    const channelMessages: Json = {}
    for (const [type, schema] of Object.entries(data) as Array<[keyof typeof data, TSchema]>) {
      channelMessages[type] = { name: type, title: `${type} (${what})`, contentType: 'application/json', headers: sseFields(type, ids[type]), payload: plain(schema) }
    }
    channels[`${what}Events`] = {
      address: `/v1/${what}/events`,
      title: `${name} events`,
      description: `GET /v1/${what}/events: the rows of GET /v1/${what} live, as Server-Sent Events, narrowed by its filters. ` +
        'First `retry:`, then a `put` per row, then `synced`; afterwards a `put` when a kept row appears or changes and a `delete` when one leaves the filter, latest per row, ' +
        'and `stale`/`live` when a view\'s state changes. Every event after the snapshot, and `synced`, has an `id:`: a client that reconnects with `Last-Event-ID` ' +
        '(or `lastEventId=`) receives the rows that changed or left since, then `synced`, or `reset` and a fresh snapshot when that id cannot be served or a bucket was created again. The OpenAPI document describes its refusals.',
      servers: [ref('#/servers/gateway')],
      messages: channelMessages
    }
    operations[`follow${name}`] = {
      action: 'send',
      title: `Follow the ${what} rows`,
      summary: `Sends the ${what} rows to a client that opened the stream.`,
      channel: ref(`#/channels/${what}Events`),
      messages: Object.keys(data).map((type) => ref(`#/channels/${what}Events/messages/${type}`)),
      bindings: streamQuery(what, 'The rows\' filters (and `lastEventId`, `access_token`: see the OpenAPI document).')
    }
  }
}

export function asyncApiDocument (version: string): Json {
  const parts: Parts = {
    schemas: {
      ErrorBody: plain(ErrorBody),
      OutOfShape: plain(OutOfShape),
      SyncedEvent: plain(Synced),
      StaleEvent: plain(Stale),
      LiveEvent: plain(Live),
      ResetEvent: plain(Reset),
      PingAnswer: plain(PingAnswer),
      InfoAnswer: plain(InfoAnswer),
      StatsAnswer: plain(StatsAnswer)
    },
    channels: {},
    operations: {},
    messages: {}
  }
  addVerb(parts)
  addDiscovery(parts)
  addBucketStreams(parts)
  addRowStreams(parts)
  const { schemas, messages, channels, operations } = parts
  return {
    asyncapi: '3.1.0',
    info: {
      title: 'mesh-provisioner',
      version,
      description: 'The mesh provisioner\'s faces beside its REST gateway: the verb `mesh-provisioner.provisioning` on NATS (request/reply, a micro service), its discovery subjects, and the gateway\'s event streams (Server-Sent Events). The REST routes are in the OpenAPI document, /openapi.json.'
    },
    defaultContentType: 'application/json',
    servers: {
      nats: { host: '127.0.0.1:4222', protocol: 'nats', description: 'The mesh\'s NATS (NATS_URL); the verb is granted by NATS account.' },
      gateway: { host: '127.0.0.1:8080', protocol: 'http', description: 'The HTTP gateway (HTTP_HOST, HTTP_PORT; HTTPS with HTTP_TLS_CERT); a bearer token when HTTP_TOKENS_FILE is set.' }
    },
    channels,
    operations,
    components: { schemas, messages }
  }
}

/** The document as committed: stable pretty JSON. */
export function asyncApiText (version: string): string {
  return `${JSON.stringify(asyncApiDocument(version), null, 2)}\n`
}
