// The HTTP-only shapes, built from the domain schemas: each route's query string is the domain's
// request fields that narrow its request, and responses name the domain's answer documents.

import type { FastifyServerOptions } from 'fastify'
import type { Static, TObject, TSchema } from 'typebox'
import { Type } from '../vendor/typebox.js'
import { FIELDS, type What } from '../domain/wire/key-shapes.js'
import { HTTP_CODES } from './errors.js'
import { MAX_WAIT_MS } from './wait.js'
import { Answers, EntrySchemas, errorBodySchema, Facets, FILTER_FIELDS, filterList, FilterValues, ModuleRow, ModulesAnswer, NatsServerStatus, NodeRow, NodesAnswer, requestFields, RegistryRun, RequestFields, ViewStatus, type FilterField, type RequestField } from '../domain/wire/schemas.js'

/** A schema's annotation (typebox's types do not carry `description` or `$id`). */
export function annotation (schema: TSchema, name: 'description' | '$id'): string {
  const value = (schema as Record<string, unknown>)[name]
  if (typeof value !== 'string') throw new Error(`the schema has no ${name}`)
  return value
}

/**
 * The gateway's validator: a route's schemas describe its query string and path for the OpenAPI
 * document, and the domain's reader alone judges them, so that a refusal says what the verb says
 * for the same field.
 */
const judgedByTheDomain = () => () => true

/**
 * The gateway's serializer: every body it sends is a string the domain serialized (answers,
 * refusals) or an object built to its schema's TypeScript type (health, readiness), so response
 * schemas describe the answers for the OpenAPI document and serialize nothing. Fastify would
 * otherwise compile a serializer for every status of every route and of its HEAD twin at start:
 * ~6 MB held and ~100 ms of the start (bench/RESULTS.md).
 */
const plainJson = () => JSON.stringify

type Compilers = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>

/**
 * Fastify's `schemaController` for the gateway and its document's instance: every route judged by
 * the domain and serialized plainly, from the start. Given after construction instead, fastify had
 * already loaded its defaults, ajv and fast-json-stringify, which no route uses: ~60 ms of CPU at
 * every start (bench/RESULTS.md, "the start").
 */
export const SCHEMA_COMPILERS = {
  compilersFactory: {
    // Typed as ajv's by fastify; fastify calls what it makes with the data alone, as here.
    buildValidator: (() => judgedByTheDomain) as unknown as NonNullable<Compilers['buildValidator']>,
    buildSerializer: () => plainJson
  }
} satisfies FastifyServerOptions['schemaController']

/** The limit when a query string gives none (docs/http.md); the domain's MAX_LIMIT caps it. */
export const DEFAULT_LIMIT = 1000

const limit = Type.Integer({
  ...RequestFields.limit,
  default: DEFAULT_LIMIT,
  description: `${annotation(RequestFields.limit, 'description')} Without it, ${DEFAULT_LIMIT}; a longer answer is cut and says so in \`cut\` and \`next\`.`
})

const wait = Type.String({
  description: `Hold the request at most this long (\`500ms\`, \`5s\`, a bare number is seconds; at most ${MAX_WAIT_MS / 1000}s): with \`since\`, until something this answer would show changes after the cursor; else with If-None-Match, while the answer still has that ETag (then 200 with the new answer, or 304 when the wait ends unchanged; an If-None-Match that does not match answers at once). Without either, 400. Beyond HTTP_MAX_WAITS held requests, 503 with Retry-After.`,
  examples: ['30s']
})

/** A list route's query parameters: its request's fields, then `wait`, which only HTTP has. */
export function listParameters (what: What): string[] {
  return [...requestFields(what), 'wait']
}

const isFilter = (field: RequestField): field is FilterField => (FILTER_FIELDS as readonly string[]).includes(field)

/** A query string's parameter for a request field: a filter field's values are the parameter repeated. */
export function parameterOf (field: RequestField): TSchema {
  return isFilter(field) ? filterList(field) : field === 'limit' ? limit : RequestFields[field]
}

/** A list route's query string, for the OpenAPI document: its parameters, all optional, and nothing else. */
export function querystringOf (what: What): TObject {
  const properties: Record<string, TSchema> = {}
  for (const field of requestFields(what)) properties[field] = Type.Optional(parameterOf(field))
  properties['wait'] = Type.Optional(wait)
  return Type.Object(properties, { additionalProperties: false })
}

/** A query string of the named fields (`limit` with the HTTP default), all optional but those in `required`, for the OpenAPI document. */
export function querystringOfFields (fields: readonly string[], required: readonly string[] = []): TObject {
  const properties: Record<string, TSchema> = {}
  for (const field of fields) {
    const schema = field === 'wait' ? wait : parameterOf(field as RequestField)
    properties[field] = required.includes(field) ? schema : Type.Optional(schema)
  }
  return Type.Object(properties, { additionalProperties: false })
}

/** The path parameters of a one-entry route: the key's fields, in key order. */
export function entryParams (what: What): TObject {
  const properties: Record<string, TSchema> = {}
  for (const field of FIELDS[what]) {
    properties[field] = field === 'collection'
      ? Type.String({ ...FilterValues.collection, description: 'The collection, by its decoded name, URL-escaped (`shell%3Azsh%3Anormal` for shell:zsh:normal).' })
      : Type.String({ ...FilterValues[field], description: `The ${field} (one key token).` })
  }
  return Type.Object(properties, { additionalProperties: false })
}

/** Each bucket's entry on its own, named for the OpenAPI document. */
export const ENTRY_SCHEMAS = {
  registry: { ...EntrySchemas.registry, $id: 'RegistryEntry' },
  needs: { ...EntrySchemas.needs, $id: 'NeedsEntry' },
  applied: { ...EntrySchemas.applied, $id: 'AppliedEntry' },
  collect: { ...EntrySchemas.collect, $id: 'CollectEntry' }
} satisfies Record<What, TSchema & { $id: string }>

/** One node's row and one module's, named for the OpenAPI document (their one-row routes answer them). */
export const ROW_SCHEMAS = {
  node: { ...NodeRow, $id: 'NodeRow' },
  module: { ...ModuleRow, $id: 'ModuleRow' }
}

/** Whether the verb is served: only once the views are settled, and never quietly lost. */
export const VerbState = Type.Union([Type.Literal('starting'), Type.Literal('serving'), Type.Literal('down')], {
  description: '`starting`: not served until every view is live or its bucket known absent; `serving`: the verb and discovery answer; `down`: its subscription ended under the service, which is serving it again.'
})
export type VerbState = Static<typeof VerbState>

export const Readiness = Type.Object({
  ready: Type.Boolean({ description: 'Connected, every view live or its bucket known absent, and the verb served.' }),
  connected: Type.Boolean({ description: 'Whether the NATS connection is up.' }),
  server: NatsServerStatus,
  verb: VerbState,
  buckets: Type.Object({
    registry: ViewStatus,
    needs: ViewStatus,
    applied: ViewStatus,
    collect: ViewStatus
  }, { description: 'Each view, by bucket.' }),
  registryWriter: Type.Union([RegistryRun, Type.Null()], { description: "The registry writer's last run; null before its first." })
}, { $id: 'Readiness', description: 'Whether this instance can answer, and why not.' })

export const Health = Type.Object({
  ok: Type.Literal(true, { description: 'Always true: the process answers.' }),
  version: Type.String({ description: "The service's version." })
}, { description: 'The process lives.' })

/** What `GET /v1/token/self` answers: the token presented, never its digest. */
export const TokenSelf = Type.Object({
  name: Type.Union([Type.String(), Type.Null()], { description: 'The token\'s name in the tokens file; null on a gateway without tokens.' }),
  nodes: Type.Union([
    Type.Literal('*', { description: 'Every node.' }),
    Type.Array(Type.String(), { description: 'Only these nodes (and the registry), in the tokens file\'s order.' })
  ], { description: 'The nodes whose needs, applied and collect entries the token reads.' }),
  metrics: Type.Boolean({ description: 'Whether the token reads /metrics.' })
}, { $id: 'TokenSelf', description: 'The token presented.' })
export type TokenSelf = Static<typeof TokenSelf>

/** The gateway's error body: the domain's codes and those of HTTP's own refusals. */
export const ErrorBody = errorBodySchema(HTTP_CODES)

/** Shared schemas registered once with fastify; routes refer to them by $id. */
export const SHARED_SCHEMAS = [Answers.registry, Answers.needs, Answers.applied, Answers.collect, ...Object.values(ENTRY_SCHEMAS), ...Object.values(Facets), NodesAnswer, ModulesAnswer, ...Object.values(ROW_SCHEMAS), ErrorBody, Readiness, TokenSelf]
