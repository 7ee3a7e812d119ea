// Reads a request from what a transport received (a JSON object on the bus, a query string over
// HTTP) into a BucketRequest, or refuses it naming the field and what would have worked. The one judge of
// both: the HTTP routes' schemas make the OpenAPI document, this decides what is taken.

// typebox/schema's Compile: the validator of typebox/compile (the same Check and Errors) without the
// ~150 modules of typebox/value that come with it, ~1 MB of heap held by every process.
import { Compile } from '../../vendor/typebox.js'
import { WHATS, type What } from './key-shapes.js'
import { byAliasesOf, FIELD_DESCRIPTIONS, FIELD_NAMES, fieldNamed, filtersOf, isDecoded, type FieldName } from './buckets.js'
import { decodeCollection } from './collection-name.js'
import { parseCursor, type Cursor } from './cursor.js'
import { defined } from '../defined.js'
import { badRequest } from './errors.js'
import { readWhole } from './numbers.js'
import { FACET_BY, FILTER_FIELDS, MODULE_STATES, NARROWED_BY, orList, OVERVIEWS, ProvisioningRequest, MAX_LIMIT, MAX_TOKEN_LENGTH, MAX_VALUES, requestFields, type Overview, type RequestField } from './schemas.js'

/**
 * What a request keeps, keyed by the bucket's field names (for collect, `contributor`): each
 * field named holds its values, distinct and sorted, at least one; an entry is kept when every
 * field named equals one of its values. One value and a list of one are the same filter.
 */
export type Filter = Readonly<Record<string, readonly string[]>>

/** A validated request. */
export interface BucketRequest {
  what: What
  filter: Filter
  after?: string
  limit?: number
  /** Only what changed after this point (docs/following-changes.md). */
  since?: Cursor
  /** Answer the distinct values of this field (a bucket field's name: for collect, `contributor`) instead of the entries (docs/glance.md). */
  by?: string
}

/** A request across buckets (docs/glance.md): `filter` holds node, module and (for modules) state. */
export interface OverviewRequest {
  what: Overview
  filter: Filter
  after?: string
  limit?: number
  since?: undefined
  by?: undefined
}

export function isOverview (request: BucketRequest | OverviewRequest): request is OverviewRequest {
  return (OVERVIEWS as readonly string[]).includes(request.what)
}

const check = Compile(ProvisioningRequest)

const TOKEN_WORDS = (example: string): string => `one key token of 1 to ${MAX_TOKEN_LENGTH} of A-Z a-z 0-9 _ - / = (e.g. "${example}")`

const SEVERAL_WORDS = `, or a list of such values (at most ${MAX_VALUES} distinct)`

/** What a key field's filter takes, in words: a token, or (a decoded field) a name. */
function fieldWorks (field: FieldName): string {
  const { example } = FIELD_DESCRIPTIONS[field]
  return (isDecoded(field) ? `a ${field} name of 1 to ${MAX_TOKEN_LENGTH} characters (e.g. "${example}")` : TOKEN_WORDS(example)) + SEVERAL_WORDS
}

const WORKS: Record<RequestField, string> = {
  what: 'one of registry, needs, applied, collect, nodes, modules',
  ...Object.fromEntries(FIELD_NAMES.map((f) => [f, fieldWorks(f)])) as Record<FieldName, string>,
  after: 'the `next` of an earlier answer (a key)',
  limit: `a whole number from 1 to ${MAX_LIMIT}`,
  since: 'the `cursor` of an earlier answer, like "1234-1795945200123456789"',
  by: `a field whose values to count: ${WHATS.map((w) => `${orList(FACET_BY[w])} (${w})`).join('; ')}`,
  state: `one of ${MODULE_STATES.join(', ')}${SEVERAL_WORDS}`
}

function shown (value: unknown): string {
  let text: string
  try {
    text = JSON.stringify(value) ?? String(value)
  } catch {
    // Nested deeper than JSON.stringify's stack goes (JSON.parse takes any depth): bad input, not a fault.
    text = Array.isArray(value) ? '[...] (nested too deep to show)' : '{...} (nested too deep to show)'
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

/** Values as the request gave them: one alone, several as a list. */
function shownValues (values: readonly string[]): string {
  return shown(values.length === 1 ? values[0] : values)
}

/**
 * Go's zero values: a client that marshals a struct without `omitempty` sends every field, the
 * ones it means nothing by as `""`, `null`, `0` or `[]`, and those count as not given (docs/verb.md).
 */
function isZeroValue (value: unknown): boolean {
  return value === '' || value === null || value === 0 || (Array.isArray(value) && value.length === 0)
}

const IS_FILTER: ReadonlySet<string> = new Set(FILTER_FIELDS)

/**
 * The name a collection filter's value spells as a key token, when it is one with an escape in it
 * (`shell=3Azsh=3Anormal`, as every `key` shows it): the filter encodes the name it is given, so that
 * spelling matches nothing. A name that is such a spelling itself is not one a person writes.
 */
function keySpelling (value: string): string | undefined {
  if (!/=[0-9A-F]{2}/.test(value)) return undefined
  const decoded = decodeCollection(value)
  return decoded.ok ? decoded.name : undefined
}

/** A filter field's values, distinct and sorted: one value and a list of one are one filter. */
function valuesOf (field: string, value: unknown): readonly string[] {
  if (typeof value === 'string') return [value]
  const values = [...new Set(value as string[])].sort()
  if (values.length > MAX_VALUES) {
    throw badRequest(field, `${field}: ${values.length} distinct values, more than one request takes; it takes at most ${MAX_VALUES}: ask in several requests`)
  }
  return values
}

/** Validates a request about one bucket (already parsed from JSON or a query string). */
export function readBucketRequest (input: unknown): BucketRequest {
  const request = readRequest(input)
  if (isOverview(request)) throw badRequest('what', `what=${request.what} spans buckets; here a request is about one: ${WORKS.what.replace(', nodes, modules', '')}`)
  return request
}

/** `by` judged for the bucket asked: the bucket's field it names (collect's `module` is its contributor). */
function facetField (what: What, by: string): string {
  const field = fieldNamed(what, by)
  const takes = FACET_BY[what] as readonly string[]
  if (!takes.includes(field)) {
    const aliases = byAliasesOf(what).map((a) => ` (${a} for ${fieldNamed(what, a)})`).join('')
    throw badRequest('by', `by: "${by}" is no field of ${what} whose values are counted; ${what} takes by = ${takes.join(', ')}${aliases}`)
  }
  return field
}

/** Validates any request object (already parsed from JSON or a query string): a bucket's request or one across buckets. */
export function readRequest (input: unknown): BucketRequest | OverviewRequest {
  const request = givenFields(input)
  judge(request)
  const what = (request['what'] ?? 'registry') as What | Overview
  const overview = (OVERVIEWS as readonly string[]).includes(what)
  const filter = filterOf(what, request, overview)
  if (overview) {
    return {
      what: what as Overview,
      filter,
      ...defined({ after: request['after'] as string | undefined, limit: request['limit'] as number | undefined })
    }
  }
  const by = request['by'] === undefined ? undefined : facetField(what as What, request['by'] as string)
  if (by !== undefined && request['since'] !== undefined) {
    throw badRequest('by', 'by counts the values the bucket holds now and since follows changes; they do not combine: drop since')
  }
  if (request['after'] !== undefined && request['since'] !== undefined) {
    throw badRequest('after', 'after pages through a list and since follows changes; they do not combine: drop after, and continue a cut since answer with since = its cursor')
  }
  return {
    what: what as What,
    filter,
    ...defined({
      after: request['after'] as string | undefined,
      limit: request['limit'] as number | undefined,
      since: request['since'] === undefined ? undefined : parseCursor(request['since'] as string),
      by
    })
  }
}

/** The fields given: a JSON object's own fields, each a request field, its zero value counting as not given. */
function givenFields (input: unknown): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw badRequest(undefined, `the request must be a JSON object such as {"what":"needs","node":"n1"}; got ${shown(input)}`)
  }
  const request: Record<string, unknown> = {}
  for (const [field, value] of Object.entries(input)) {
    // Own fields only: `constructor` or `toString` is an unknown field like any other.
    if (!Object.hasOwn(WORKS, field)) {
      throw badRequest(field, `"${field}" is not a request field; the fields are ${Object.keys(WORKS).join(', ')}`)
    }
    // A list of one is the value alone (so `[""]` is `""`, not given); in a longer list, each is judged.
    const given = IS_FILTER.has(field) && Array.isArray(value) && value.length === 1 ? value[0] as unknown : value
    if (!isZeroValue(given)) request[field] = given
  }
  return request
}

/** Refuses a request its schema does not take, naming the first field at fault and what it takes. */
function judge (request: Record<string, unknown>): void {
  if (check.Check(request)) return
  for (const field of Object.keys(WORKS) as RequestField[]) {
    if (field in request && !check.Check({ [field]: request[field] })) {
      // A by no bucket counts is refused naming the fields of the bucket asked (what is judged first).
      const what = request['what'] ?? 'registry'
      if (field === 'by' && typeof request['by'] === 'string' && WHATS.includes(what as What)) facetField(what as What, request['by'])
      throw badRequest(field, `${field}: ${shown(request[field])} will not do; it takes ${WORKS[field]}`)
    }
  }
  throw badRequest(undefined, 'the request does not fit its schema; see the endpoint metadata request_schema')
}

/** The values each filter of `what` keeps, by field name (an alias read as its field); refuses a filter `what` does not take. */
function filterOf (what: What | Overview, request: Record<string, unknown>, overview: boolean): Record<string, readonly string[]> {
  const filter: Record<string, readonly string[]> = {}
  const allowed = NARROWED_BY[what] as readonly string[]
  for (const field of Object.keys(request) as RequestField[]) {
    // An overview takes neither since nor by: they are refused as any field it does not take.
    if (!IS_FILTER.has(field) && !(overview && (field === 'since' || field === 'by'))) continue
    if (!allowed.includes(field)) {
      throw badRequest(field, `${field} does not narrow what=${what}; ${what} takes ${requestFields(what).join(', ')}`)
    }
    const name = overview ? field : fieldNamed(what as What, field)
    const values = valuesOf(field, request[field])
    const earlier = filter[name]
    if (earlier !== undefined && earlier.join('\u0000') !== values.join('\u0000')) {
      const alias = filtersOf(what as What).find((f) => f !== name && fieldNamed(what as What, f) === name)
      throw badRequest(field, `${alias} and ${name} name the ${name} twice, as ${shownValues(earlier)} and ${shownValues(values)}; give one`)
    }
    if (isDecoded(field)) judgeNames(field, values)
    filter[name] = values
  }
  return filter
}

/** Refuses a decoded name (a collection) that is not well-formed text, or that is spelled as a key spells it. */
function judgeNames (field: RequestField, values: readonly string[]): void {
  const broken = values.find((v) => !v.isWellFormed())
  if (broken !== undefined) throw badRequest(field, `${field}: ${shown(broken)} holds a lone surrogate; it takes ${WORKS[field]}`)
  const spelled = values.find((v) => keySpelling(v) !== undefined)
  if (spelled !== undefined) {
    throw badRequest(field, `${field}: ${shown(spelled)} is a name as a key spells it, which would match nothing; the filter takes the name itself: ${shown(keySpelling(spelled))}`)
  }
}

/** A whole number where a query string's text is one whole, so that the value is judged; else the text, which the schema refuses naming the field. */
function numberIn (text: string): number | string {
  return readWhole(text) ?? text
}

/**
 * Validates the parameters of a query string asking `what` (as a query string parser gives them:
 * text, or a list of texts for a repeated name). `where` names the route for the refusal of a
 * parameter it does not take; `takes` are its parameters, by default every field of the request.
 */
export function readParameters (what: What, parameters: object, where: string, takes: readonly string[] = requestFields(what)): BucketRequest {
  return readBucketRequest(parametersRequest(what, parameters, where, takes))
}

/** As readParameters, for a request across buckets. */
export function readOverviewParameters (what: Overview, parameters: object, where: string, takes: readonly string[] = requestFields(what)): OverviewRequest {
  return readRequest(parametersRequest(what, parameters, where, takes)) as OverviewRequest
}

function parametersRequest (what: What | Overview, parameters: object, where: string, takes: readonly string[]): Record<string, unknown> {
  const request: Record<string, unknown> = { what }
  for (const [name, value] of Object.entries(parameters)) {
    // A field of another request reaches readBucketRequest, which says what this one takes instead.
    const otherRequests = takes.length > 0 && name !== 'what' && Object.hasOwn(WORKS, name)
    if (name === 'by' && !takes.includes(name) && typeof what === 'string' && !(OVERVIEWS as readonly string[]).includes(what)) {
      throw badRequest(name, `${where} answers entries; the distinct values of a field are at GET /v1/${what}/facets?by=…`)
    }
    if (!takes.includes(name) && !otherRequests) {
      throw badRequest(name, `"${name}" is not a parameter of ${where}; it takes ${takes.length === 0 ? 'none' : takes.join(', ')}`)
    }
    request[name] = name === 'limit' && typeof value === 'string' ? numberIn(value) : value
  }
  return request
}
