// The one source of truth for every shape on the wire: the verb's request and answer, the HTTP
// routes' query strings and responses, the OpenAPI document and the endpoint's metadata are all
// made from these typebox schemas, and the TypeScript types are their Static<>.

import type { Static, TSchema } from 'typebox'
import { Type } from '../../vendor/typebox.js'
import { BUCKETS, FIELDS, TOKEN_PATTERN, type What } from './key-shapes.js'
import { BUCKET_DESCRIPTIONS, BY_NAMES, byAliasesOf, FIELD_DESCRIPTIONS, FIELD_NAMES, filtersOf, isDecoded, perBucket, WHATS, type FieldName } from './buckets.js'
import { ERROR_CODES } from './errors.js'

/** The longest token (and collection name) a request may name. */
export const MAX_TOKEN_LENGTH = 256

const token = (description: string, example: string) =>
  Type.String({ pattern: TOKEN_PATTERN, minLength: 1, maxLength: MAX_TOKEN_LENGTH, description, examples: [example] })

/** The largest `limit` anyone may ask for; HTTP also defaults to 1000 (docs/http.md). */
export const MAX_LIMIT = 10000

/** One of `values`: a union, or the one literal when there is one (an anyOf of one says nothing more). */
export function literals (values: readonly string[], options: { description: string, examples?: string[] }): TSchema {
  return values.length === 1 ? Type.Literal(values[0] as string, options) : Type.Union(values.map((v) => Type.Literal(v)), options)
}

/** The requests that span buckets (docs/glance.md): a row per node, a row per module on a node. */
export const OVERVIEWS = ['nodes', 'modules'] as const
export type Overview = (typeof OVERVIEWS)[number]

/** A module's provisioning state on a node (docs/glance.md). */
export const MODULE_STATES = ['unapplied', 'pending', 'applied', 'orphaned'] as const
export type ModuleState = (typeof MODULE_STATES)[number]

/** The fields whose distinct values each bucket answers (facets, buckets.ts); `module` is also taken for collect's contributor. */
export const FACET_BY = perBucket((w) => BUCKET_DESCRIPTIONS[w].facets) as { readonly [W in What]: (typeof BUCKET_DESCRIPTIONS)[W]['facets'] }

/** `a`, `a or b`, `a, b or c`. */
export function orList (words: readonly string[]): string {
  return words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1] as string}`
}

const quoted = (words: readonly string[]): string[] => words.map((w) => `\`${w}\``)

/** What `by` asks, for the verb's check and for each bucket's request in the AsyncAPI document. */
export const BY_DESCRIPTION = 'Answer the distinct values of this field among the entries the filter keeps, with their counts, instead of the entries (facets): ' +
  WHATS.map((w) => {
    const aliases = byAliasesOf(w)
    return `${orList(quoted(FACET_BY[w]))}${aliases.length === 0 ? '' : ` (or ${orList(quoted(aliases))})`} for ${w}`
  }).join('; ') + '.'

/** The most distinct values one filter field may take (docs/verb.md). */
export const MAX_VALUES = 100

/** One value of a key field's filter: a token, or (a decoded field) any name the service encodes. */
function filterValue (field: FieldName): TSchema {
  const { filter, example } = FIELD_DESCRIPTIONS[field]
  return isDecoded(field)
    ? Type.String({ minLength: 1, maxLength: MAX_TOKEN_LENGTH, description: filter, examples: [example] })
    : token(filter, example)
}

const byField = <T>(make: (field: FieldName) => T) => Object.fromEntries(FIELD_NAMES.map((f) => [f, make(f)])) as Record<FieldName, T>

/** One value of each filter field, as a path segment or a single filter names it. */
export const FilterValues = {
  ...byField(filterValue),
  state: literals(MODULE_STATES, {
    description: 'For modules: only modules in this state on their node: `unapplied` (needs, nothing applied), `pending` (a need written after the applied entry), `applied` (no need written after it) or `orphaned` (applied, no needs).',
    examples: ['pending']
  })
}

export type FilterField = keyof typeof FilterValues
export const FILTER_FIELDS = Object.keys(FilterValues) as FilterField[]

const described = (schema: TSchema): string => (schema as { description?: string }).description ?? ''

const SEVERAL = `An entry is kept when its field equals any of the values given (at most ${MAX_VALUES} distinct); an empty list is no filter.`

/** A filter field's values as a list: how a query string's repeated parameter says them. */
export function filterList (field: FilterField) {
  const one = FilterValues[field]
  const example = (one as { examples?: unknown[] }).examples?.[0]
  return Type.Array(one, { examples: [[example]], description: `${described(one)} ${SEVERAL} Repeat the parameter for several: \`?${field}=a&${field}=b\`.` })
}

/** The verb's filter field: one value, or several as an array. */
function filterField (field: FilterField) {
  const one = FilterValues[field]
  return Type.Union([one, Type.Array(one)], { description: `${described(one)} ${SEVERAL} Several as an array: \`"${field}":["a","b"]\`.` })
}

export const RequestFields = {
  what: Type.Union([Type.Literal('registry'), Type.Literal('needs'), Type.Literal('applied'), Type.Literal('collect'), Type.Literal('nodes'), Type.Literal('modules')], {
    description: 'Which bucket to read: `registry` (the default), `needs`, `applied` or `collect`; or the mesh at a glance: `nodes` (a row per node) or `modules` (a row per module on a node, with its provisioning state).',
    default: 'registry'
  }),
  ...byField(filterField),
  // No longer limit than a key's: NATS takes keys of any length its control line holds, and every
  // `next` the service hands out must be taken back.
  after: Type.String({
    minLength: 1,
    description: 'Continue after this key: the `next` of an earlier answer.',
    examples: ['n1.gitea.secret.db-password']
  }),
  limit: Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `At most this many entries (1 to ${MAX_LIMIT}).`, examples: [100] }),
  by: Type.Union(BY_NAMES.map((f) => Type.Literal(f)), { description: BY_DESCRIPTION, examples: [BY_NAMES[0]] }),
  state: filterField('state'),
  since: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'Only what changed after this cursor (the `cursor` of an earlier answer): puts as `entries` in revision order, deletions under `deleted`. Does not combine with `after`.',
    examples: ['1234-1795945200123456789']
  })
}

export type RequestField = keyof typeof RequestFields

/**
 * The verb's request: a JSON object; an empty payload means `{"what":"registry"}`. A field holding
 * its type's zero value counts as not given (readBucketRequest drops it before this schema checks).
 */
export const ProvisioningRequest = Type.Object({
  what: Type.Optional(RequestFields.what),
  ...byField((f) => Type.Optional(RequestFields[f])),
  after: Type.Optional(RequestFields.after),
  limit: Type.Optional(RequestFields.limit),
  since: Type.Optional(RequestFields.since),
  by: Type.Optional(RequestFields.by),
  state: Type.Optional(RequestFields.state)
}, { additionalProperties: false, description: 'A request to mesh-provisioner.provisioning.', $id: 'ProvisioningRequest' })
export type ProvisioningRequest = Static<typeof ProvisioningRequest>

/** Which request fields narrow each request, beside `what`, `after` and `limit`. */
export const NARROWED_BY: Readonly<Record<What | Overview, readonly RequestField[]>> = {
  ...perBucket(filtersOf),
  nodes: ['node'],
  modules: ['node', 'module', 'state']
}

/** The fields a request about `what` takes beside `what` itself: those that narrow it, then paging. */
export function requestFields (what: What | Overview): RequestField[] {
  return (OVERVIEWS as readonly string[]).includes(what) ? [...NARROWED_BY[what], 'after', 'limit'] : [...NARROWED_BY[what], 'after', 'limit', 'since']
}

const entryCommon = {
  key: Type.String({ description: 'The key as stored in the bucket.' }),
  value: Type.Optional(Type.Unknown({ description: "The writer's JSON value, passed through. Absent when the value is not JSON." })),
  raw: Type.Optional(Type.String({ description: 'The value as text, when it is UTF-8 but not JSON.' })),
  rawBase64: Type.Optional(Type.String({ description: 'The value in base64, when it is not UTF-8.' })),
  problem: Type.Optional(Type.String({ description: 'Why `value` is absent.' })),
  revision: Type.Integer({ description: 'The revision (bucket stream sequence) that wrote this entry.' }),
  updated: Type.String({ format: 'date-time', description: 'When that revision was written.' })
}

function entrySchema (what: What): TSchema {
  const fields: Record<string, TSchema> = {}
  for (const f of FIELDS[what]) fields[f] = Type.String({ description: FIELD_DESCRIPTIONS[f].entry })
  return Type.Object({ ...fields, ...entryCommon }, { description: `One ${what} entry: the key read into its fields.` })
}

function deletedSchema (what: What): TSchema {
  const fields: Record<string, TSchema> = {}
  for (const f of FIELDS[what]) fields[f] = Type.Optional(Type.String({ description: `${FIELD_DESCRIPTIONS[f].entry} Absent when the key does not fit the bucket's shape.` }))
  return Type.Object({
    key: Type.String({ description: 'The key deleted or purged.' }),
    ...fields,
    revision: Type.Integer({ description: 'The revision of the deletion.' })
  }, { description: `A ${what} key deleted or purged after the cursor.` })
}

export const OutOfShape = Type.Object({
  key: Type.String({ description: 'The key as stored.' }),
  revision: Type.Integer({ description: 'The revision that wrote it.' }),
  reason: Type.String({ description: "Why it does not fit the bucket's key shape, in words." })
}, { description: "A key that does not fit its bucket's shape: said, never dropped." })

export const Cut = Type.Object({
  reason: Type.Union([Type.Literal('payload'), Type.Literal('limit')], {
    description: '`limit`: the asked (or default) limit was reached; `payload`: the next entry would have passed the maximum answer size.'
  }),
  omitted: Type.Integer({ minimum: 1, description: 'How many matching entries (with `since`: changes) after this page were left out; ask again with `after` = `next` (with `since`: `since` = `cursor`).' })
}, { description: 'Present when the answer was cut short.' })

function answerSchema (what: What) {
  return Type.Object({
    what: Type.Literal(what, { description: 'What was asked.' }),
    bucket: Type.Literal(BUCKETS[what], { description: 'The bucket read.' }),
    revision: Type.Integer({ description: 'The last revision that changed what this answer holds: for a filtered answer, the last put or delete of a key the filter keeps (conservatively: it may be later, never earlier). With `since`, the last change included.' }),
    total: Type.Integer({ description: 'How many entries match the filter, before any cut and regardless of `after`; with `since`, how many changes (entries, deletions and out-of-shape keys).' }),
    stale: Type.Boolean({ description: 'True while the service answers from what it last knew: cut off from NATS, catching up after a reconnect, or reloading a re-created bucket.' }),
    entries: Type.Array(entrySchema(what), { description: 'The matching entries, sorted by key.' }),
    deleted: Type.Optional(Type.Array(deletedSchema(what), { description: 'With `since`: the keys deleted or purged after the cursor that the filter keeps, in revision order.' })),
    outOfShape: Type.Array(OutOfShape, { description: 'Keys of this bucket that do not fit its shape and that the filter does not contradict, sorted by key (with `since`: those put after the cursor, in revision order).' }),
    outOfShapeOmitted: Type.Optional(Type.Integer({ minimum: 1, description: 'How many more out-of-shape keys there are than this answer had room to list.' })),
    next: Type.Optional(Type.String({ description: 'Present when cut (without `since`): the key to pass as `after` to continue.' })),
    cut: Type.Optional(Cut),
    cursor: Type.String({ description: "The point of the bucket's history this answer reflects (its generation and `revision`): pass it as `since` to learn only what changed after it." })
  }, { description: `The ${what} answer.`, $id: `${what[0]?.toUpperCase()}${what.slice(1)}Answer` })
}

export const EntrySchemas = {
  registry: entrySchema('registry'),
  needs: entrySchema('needs'),
  applied: entrySchema('applied'),
  collect: entrySchema('collect')
}

const stale = Type.Boolean({ description: 'True while the service answers from what it last knew (of any bucket the answer reads): cut off from NATS, catching up after a reconnect, or reloading a re-created bucket.' })
const next = (what: string) => Type.Optional(Type.String({ description: `Present when cut: the ${what} to pass as \`after\` to continue.` }))

function facetsSchema (what: What) {
  const title = `${what[0]?.toUpperCase()}${what.slice(1)}`
  return Type.Object({
    what: Type.Literal(what, { description: 'The bucket whose entries were counted.' }),
    bucket: Type.Literal(BUCKETS[what], { description: 'The bucket read.' }),
    by: literals(FACET_BY[what], { description: 'The field whose values are counted.' }),
    revision: Type.Integer({ description: 'The last revision that changed what the filter keeps (conservatively: it may be later, never earlier).' }),
    cursor: Type.String({ description: "The point of the bucket's history this answer reflects: the list's `since` takes it." }),
    stale,
    total: Type.Integer({ description: 'How many distinct values the filter keeps, whatever `after` and the cut.' }),
    values: Type.Array(Type.Object({
      value: Type.String({ description: 'A value of `by` (a collection by its decoded name).' }),
      count: Type.Integer({ minimum: 1, description: 'How many entries the filter keeps hold it.' }),
      revision: Type.Integer({ description: 'The last put or delete of a key holding it (conservatively: it may be later, never earlier).' })
    }, { description: 'One distinct value.' }), { description: 'The values, sorted by their UTF-8 bytes.' }),
    outOfShape: Type.Integer({ description: 'How many out-of-shape keys the filter keeps (the list names them).' }),
    next: next('value'),
    cut: Type.Optional(Cut)
  }, { description: `The distinct values of one field of the ${what} entries (facets).`, $id: `${title}Facets` })
}

export const Facets = {
  registry: facetsSchema('registry'),
  needs: facetsSchema('needs'),
  applied: facetsSchema('applied'),
  collect: facetsSchema('collect')
}

const stateCounts = Object.fromEntries(MODULE_STATES.map((s) => [s, Type.Integer({ description: `Its modules in state \`${s}\`.` })]))

export const NodeRow = Type.Object({
  node: Type.String({ description: 'The node: the first token of its keys.' }),
  needs: Type.Integer({ description: 'Its entries in the needs bucket.' }),
  applied: Type.Integer({ description: 'Its entries in the applied bucket.' }),
  collect: Type.Integer({ description: 'Its entries in the collect bucket.' }),
  outOfShape: Type.Integer({ description: 'Its out-of-shape keys in the three buckets (keys whose first token names it).' }),
  updated: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'The latest write of its entries still there (when its provisioner client last wrote); null without entries.' }),
  modules: Type.Object(stateCounts, { description: 'How many of its modules are in each state.' }),
  waiting: Type.Integer({ description: 'Its needs not yet applied: the sum of its modules\' `waiting`.' }),
  waitingSince: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'The earliest `waitingSince` of its modules (at the precision NATS gives, nanoseconds): how long something on it has waited; null when nothing waits.' }),
  unanswered: Type.Integer({ description: 'Its needs of a kind that no entry of the registry answers: the sum of its modules\' `unanswered`.' })
}, { description: 'One node, as the three buckets name it.' })

/** A moment at the precision NATS gives it: the states compare these. */
const instant = (description: string) => Type.String({ format: 'date-time', description: `${description} At the precision NATS gives (nanoseconds), which the state compares.` })

export const ModuleRow = Type.Object({
  node: Type.String({ description: 'The node.' }),
  module: Type.String({ description: 'The module.' }),
  needs: Type.Integer({ description: 'Its needs on the node.' }),
  needsUpdated: Type.Union([instant('The latest write of its needs.'), Type.Null()], { description: 'The latest write of its needs; null without needs.' }),
  applied: Type.Union([Type.Object({
    revision: Type.Integer({ description: 'The revision of its applied entry.' }),
    updated: instant('When the applied entry was written.')
  }), Type.Null()], { description: 'Its applied entry; null without one.' }),
  state: Type.Union(MODULE_STATES.map((s) => Type.Literal(s)), { description: '`unapplied`: needs and no applied entry; `pending`: a need written after the applied entry; `applied`: no need written after it; `orphaned`: applied, no needs.' }),
  waiting: Type.Integer({ description: 'How many of its needs are not yet applied: every need when `unapplied`, those written after the applied entry when `pending`, 0 otherwise.' }),
  waitingSince: Type.Union([instant('The earliest write among the needs that wait.'), Type.Null()], { description: 'The earliest write among the needs that wait (how long the module has waited, as far as the entries still there tell); null when none waits. It holds no "now": it changes only when a write changes it.' }),
  unanswered: Type.Integer({ description: 'How many of its needs are of a kind that no entry of the registry answers: such a need stands asked, since no domain will provide it. A registry write that adds or removes a kind moves it.' })
}, { description: 'One module on one node, with its provisioning state, and what keeps it from `applied` since when.' })

export const NodesAnswer = Type.Object({
  what: Type.Literal('nodes', { description: 'What was asked.' }),
  stale,
  total: Type.Integer({ description: 'How many nodes the filter keeps, whatever `after` and the cut.' }),
  nodes: Type.Array(NodeRow, { description: 'A row per node, sorted by node.' }),
  next: next('node'),
  cut: Type.Optional(Cut)
}, { description: 'A row per node that a key of needs, applied or collect names.', $id: 'NodesAnswer' })

export const ModulesAnswer = Type.Object({
  what: Type.Literal('modules', { description: 'What was asked.' }),
  stale,
  total: Type.Integer({ description: 'How many modules the filter keeps, whatever `after` and the cut.' }),
  modules: Type.Array(ModuleRow, { description: 'A row per node and module, sorted by node then module.' }),
  next: next('`<node>.<module>`'),
  cut: Type.Optional(Cut)
}, { description: 'A row per module on a node that has a need or an applied entry.', $id: 'ModulesAnswer' })

/** Each request's answer document: a bucket's list, and the mesh at a glance's nodes and modules (a list's request with `by` answers its Facets). */
export const Answers = {
  registry: answerSchema('registry'),
  needs: answerSchema('needs'),
  applied: answerSchema('applied'),
  collect: answerSchema('collect'),
  nodes: NodesAnswer,
  modules: ModulesAnswer
}

/** The verb's answer: one of the answer documents. */
export const ProvisioningAnswer = Type.Union([Answers.registry, Answers.needs, Answers.applied, Answers.collect, Facets.registry, Facets.needs, Facets.applied, Facets.collect, NodesAnswer, ModulesAnswer], {
  description: 'The answer of mesh-provisioner.provisioning; the HTTP gateway returns the same document.'
})

/**
 * The error body of a face whose codes are `codes`: the domain's on the bus; the HTTP gateway adds
 * the codes of its transport's own refusals (405, 413...).
 */
export function errorBodySchema<C extends string> (codes: readonly C[]) {
  return Type.Object({
    error: Type.Object({
      code: Type.Union(codes.map((c) => Type.Literal(c)), { description: 'A stable code for programs.' }),
      message: Type.String({ description: 'What was wrong and what would have worked, for people.' }),
      field: Type.Optional(Type.String({ description: 'The request field at fault, when there is one.' }))
    }, { description: 'What was refused and why.' })
  }, { description: 'Every refusal, on the bus and over HTTP.', $id: 'ErrorBody' })
}

export const ErrorBody = errorBodySchema(ERROR_CODES)
export type ErrorBody = Static<typeof ErrorBody>

/** A registry answer (docs/registry.md): where a client finds the values of one kind. */
export const RegistryValue = Type.Object({
  kind: Type.String({ description: 'The kind of placeholder answered.' }),
  module: Type.String({ description: 'The owning module; `<provider-module>` where each provider owns its own.' }),
  bucket: Type.Optional(Type.String({ description: 'The bucket holding the values.' })),
  key: Type.Optional(Type.String({ description: "The bucket's key shape." })),
  collection: Type.Optional(Type.String({ description: 'The collection, where the bucket is the collect bucket.' })),
  verb: Type.Optional(Type.String({ description: "The seat's verb asked on request and reply." })),
  note: Type.Optional(Type.String({ description: 'A remark for people.' }))
}, { additionalProperties: false })
export type RegistryValue = Static<typeof RegistryValue>

/** One bucket's view, as readiness and metrics report it. */
export const ViewStatus = Type.Object({
  bucket: Type.String({ description: 'The bucket.' }),
  state: Type.Union([Type.Literal('starting'), Type.Literal('absent'), Type.Literal('loading'), Type.Literal('live')], {
    description: '`absent`: the bucket does not exist (yet); `loading`: its snapshot is arriving; `live`: answers come from it.'
  }),
  stale: Type.Boolean({ description: 'True while cut off from NATS, catching up after a reconnect, or reloading a re-created bucket (answers then come from what was held).' }),
  revision: Type.Integer({ description: 'The last revision the view has seen.' }),
  keys: Type.Integer({ description: 'Entries held.' }),
  outOfShape: Type.Integer({ description: "Keys that do not fit the bucket's shape." })
}, { description: "One bucket's view." })
export type ViewStatus = Static<typeof ViewStatus>
export type ViewState = ViewStatus['state']

/** A known defect of the nats-server the service is connected to (follow/server-defects.ts). */
export const ServerDefect = Type.Object({
  server: Type.String({ description: 'The version the server gave at connect.' }),
  defect: Type.String({ description: 'What goes wrong on it, and what the service does about it.' }),
  issue: Type.String({ description: 'The upstream change that fixed it.' }),
  fixedIn: Type.String({ description: 'The first nats-server version without it: upgrade to it or later.' })
}, { description: 'A known data-loss defect of the connected nats-server, worked around.' })
export type ServerDefect = Static<typeof ServerDefect>

/** The nats-server the connection is on, as readiness reports it. */
export const NatsServerStatus = Type.Object({
  version: Type.Union([Type.String(), Type.Null()], { description: 'The version the server gave at connect (again after a reconnect to another server); null before the first connect.' }),
  defect: Type.Union([ServerDefect, Type.Null()], { description: 'Its known data-loss defect, null when it has none the service knows of.' })
}, { description: 'The nats-server this instance is connected to.' })

/** What one run of the registry writer did. */
export const RegistryRun = Type.Object({
  at: Type.String({ format: 'date-time', description: 'When the run started.' }),
  ok: Type.Boolean({ description: 'Whether the registry now holds exactly the compiled answers.' }),
  durationMs: Type.Number({ description: 'How long the run took.' }),
  wrote: Type.Array(Type.String(), { description: 'Kinds written because their bytes differed or were absent.' }),
  left: Type.Array(Type.String(), { description: 'Kinds left as they were.' }),
  deleted: Type.Array(Type.String(), { description: 'Kinds deleted because no domain answers them.' }),
  error: Type.Optional(Type.String({ description: 'Why the run failed.' })),
  nextAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the next run is due.' }))
}, { description: "The registry writer's last run." })
export type RegistryRun = Static<typeof RegistryRun>
