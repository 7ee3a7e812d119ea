// The wire held by its schemas: every body the suite receives is checked against what the service
// publishes, compiled from the same typebox schemas: over HTTP the OpenAPI document's response
// schema of the route and status, on the bus the verb's answer or error schema (its endpoint
// metadata), in a stream each event's data. The helpers (http.ts, verb.ts, sse.ts) call these,
// so every suite checks its bodies without saying so.

import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { TSchema } from 'typebox'
import { Answers, ErrorBody as BusErrorBody, Facets, OVERVIEWS, ProvisioningAnswer, type Overview } from '../../src/domain/wire/schemas.js'
import { WHATS, type What } from '../../src/domain/wire/key-shapes.js'
import { openApiText } from '../../src/http/openapi-document.js'
import { ERROR_CODES } from '../../src/domain/wire/errors.js'
import { HTTP_CODES, HTTP_STATUS } from '../../src/http/errors.js'
import { eventData, rowEventData } from '../../src/http/event-schemas.js'
import { ErrorBody as HttpErrorBody } from '../../src/http/schemas.js'
import { VERSION } from '../../src/version.js'

interface Operation { responses: Record<string, { content?: Record<string, { schema?: object }> }> }
interface Document { paths: Record<string, Record<string, Operation>> }

/** One compiler per face: both faces name their error body `ErrorBody`, with codes of their own. */
function compiler (): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  return ajv
}

/** Throws, saying what does not fit where, unless `body` fits `validate`. */
function check (validate: ValidateFunction, body: unknown, where: string): void {
  if (validate(body)) return
  const faults = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}${e.params === undefined ? '' : ` ${JSON.stringify(e.params)}`}`)
  throw new Error(`${where}: the body does not fit its published schema: ${faults.join('; ')}\n${JSON.stringify(body).slice(0, 600)}`)
}

/** `make`'s value, made on the first call: a file compiles only the validators it checks against. */
function once<T> (make: () => T): () => T {
  let made: { value: T } | undefined
  return () => (made ??= { value: make() }).value
}

interface HttpWire {
  /** The document's paths as patterns, those with fewer parameters first (`/v1/needs/events` before `/v1/needs/{…}`). */
  routes: Array<{ pattern: RegExp, operations: Record<string, Operation> }>
  ajv: Ajv2020
  errorBody: () => ValidateFunction
  /** By the response schema's reference (the routes' refusals share one), or the inline schema. */
  compiled: Map<string | object, ValidateFunction>
}

let httpWire: Promise<HttpWire> | undefined

/** The statuses of the transport's own refusals (405, 413, 431...): any route may answer them, none documents them. */
const TRANSPORT_STATUSES = new Set(HTTP_CODES.filter((c) => !(ERROR_CODES as readonly string[]).includes(c)).map((c) => HTTP_STATUS[c]))

async function loadHttpWire (): Promise<HttpWire> {
  const doc = JSON.parse(await openApiText(VERSION)) as Document
  const ajv = compiler()
  ajv.addSchema(doc, 'openapi.json')
  const routes = Object.entries(doc.paths)
    .map(([path, operations]) => ({ path, operations }))
    .sort((a, b) => (a.path.match(/\{/g)?.length ?? 0) - (b.path.match(/\{/g)?.length ?? 0))
    .map(({ path, operations }) => ({ pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`), operations }))
  return { routes, ajv, errorBody: once(() => ajv.compile(HttpErrorBody)), compiled: new Map() }
}

/**
 * Checks an HTTP answer's JSON body against the document: a documented route's schema for its
 * status, and a status the document does not give that route is a fault, but for the transport's
 * own refusals; those, and any refusal of an undocumented route, against the error body. Bodies
 * that are not JSON (streams, metrics, pages) and undocumented routes' answers are not the
 * document's to judge.
 */
export async function checkHttpBody (method: string, url: string, status: number, contentType: string | undefined, text: string): Promise<void> {
  if (method === 'HEAD' || status === 304 || text === '' || !/^application\/json\b/.test(contentType ?? '')) return
  const where = `${method} ${url} ${status}`
  const body: unknown = JSON.parse(text)
  const wire = await (httpWire ??= loadHttpWire())
  const path = new URL(url).pathname
  const operation = method === 'GET' ? wire.routes.find((r) => r.pattern.test(path))?.operations['get'] : undefined
  const response = operation?.responses[String(status)] ?? operation?.responses[`${String(status)[0]}XX`]
  const schema = response?.content?.['application/json']?.schema
  if (schema === undefined) {
    if (operation !== undefined && !TRANSPORT_STATUSES.has(status)) throw new Error(`${where}: the OpenAPI document gives this route no ${status} answer`)
    if (status >= 400) check(wire.errorBody(), body, where)
    return
  }
  // A reference resolves in the document; an inline schema is compiled as it stands.
  const ref = (schema as { $ref?: string }).$ref
  let validate = wire.compiled.get(ref ?? schema)
  if (validate === undefined) {
    validate = wire.ajv.compile(ref === undefined ? schema : { $ref: `openapi.json${ref}` })
    wire.compiled.set(ref ?? schema, validate)
  }
  check(validate, body, where)
}

const bus = once(compiler)
const busAnswer = once(() => bus().compile(ProvisioningAnswer))
const busError = once(() => bus().compile(BusErrorBody))
/** An answer schema's member compiled apart, its $id left out (the union holds it). */
const member = (schema: TSchema): () => ValidateFunction => {
  const { $id: _id, ...rest } = schema as TSchema & { $id?: string }
  return once(() => bus().compile(rest))
}
/** The answer schema's members by their `what` (facets: by `what` with `by`), so that a fault is said against the answer meant. */
const busAnswers = new Map(Object.entries(Answers).map(([w, schema]) => [w, member(schema)]))
const busFacets = new Map(WHATS.map((w) => [w as string, member(Facets[w])]))

/** Checks a verb's reply: an answer (no error code) against the verb's answer schema, a refusal against its error body. */
export function checkVerbBody (request: unknown, code: number, body: unknown): void {
  const where = `the verb's ${code} to ${typeof request === 'string' ? request : JSON.stringify(request)}`
  if (code !== 200) return check(busError(), body, where)
  const { what, by } = (body ?? {}) as { what?: unknown, by?: unknown }
  const meant = (by === undefined ? busAnswers : busFacets).get(String(what))
  if (meant !== undefined) check(meant(), body, where)
  check(busAnswer(), body, where)
}

/** The data of each event of a `what`'s stream (a bucket's entries, or the live rows), by the event's name, as the AsyncAPI document gives them. */
const streamEventData = (what: What | Overview): Record<string, TSchema> => (OVERVIEWS as readonly string[]).includes(what) ? rowEventData(what as Overview) : eventData(what as What)

const events = new Map<What | Overview, Map<string, () => ValidateFunction>>()

/** The `what` an events URL streams, when it is one (`/v1/<what>/events`). */
export function streamWhat (url: string): What | Overview | undefined {
  const what = /^\/v1\/([^/]+)\/events$/.exec(new URL(url).pathname)?.[1]
  return [...WHATS, ...OVERVIEWS].find((w) => w === what)
}

/** Checks one event's data against its schema (docs/following-changes.md): a name the stream does not send is a fault. */
export function checkEventData (what: What | Overview, event: string, data: string): void {
  let byName = events.get(what)
  if (byName === undefined) {
    const ajv = once(compiler)
    byName = new Map(Object.entries(streamEventData(what)).map(([name, schema]: [string, TSchema]) => [name, once(() => ajv().compile(schema))]))
    events.set(what, byName)
  }
  const validate = byName.get(event)
  if (validate === undefined) throw new Error(`a ${what} stream sent an event named ${JSON.stringify(event)}, which it does not send`)
  check(validate(), JSON.parse(data), `a ${what} stream's ${event} event`)
}
