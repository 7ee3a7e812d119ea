// The mesh at a glance over HTTP (docs/glance.md): facets of each bucket, the nodes and the modules with
// their state, and one node's or one module's row. Thin adapters like the list routes: the
// domain's reader judges the query string, the domain answers, the bytes are sent untouched.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Type } from '../../vendor/typebox.js'
import { BUCKETS, WHATS, type What } from '../../domain/wire/key-shapes.js'
import { byNamesOf } from '../../domain/wire/buckets.js'
import { badRequest as badRequestOf } from '../../domain/wire/errors.js'
import { readOverviewParameters, readParameters, readRequest, type OverviewRequest } from '../../domain/wire/request.js'
import { FACET_BY, Facets, FilterValues, literals, MODULE_STATES, ModulesAnswer, NARROWED_BY, NodesAnswer, type Overview } from '../../domain/wire/schemas.js'
import { RecentlyUsed } from '../../domain/answers/recently-used.js'
import { Answer, keptRequestBytes } from '../../domain/answers/provisioning.js'
import { accessOf, requestKey } from '../access.js'
import { etagOf, sendAnswer } from '../answer.js'
import { refusal } from '../examples.js'
import { FACETS_EXAMPLES, MODULE_EXAMPLE, MODULE_NOT_FOUND_EXAMPLE, MODULES_EXAMPLE, NODE_EXAMPLE, NODE_NOT_FOUND_EXAMPLE, NODES_EXAMPLE } from '../overview-examples.js'
import { ANSWER_HEADERS, badRequest, errorResponses, json, notModified, refused, type RouteDeps } from '../responses.js'
import { DEFAULT_LIMIT, ROW_SCHEMAS, annotation, querystringOfFields } from '../schemas.js'
import { hold, needsWhat, readWait } from '../wait.js'

/** A route's request, read once per URL, and the ETag of the tag it last answered. */
interface UrlRequest {
  kept: { tag: () => string, answer: () => Answer }
  /** How long `wait` holds it (with If-None-Match), when asked. */
  wait: number | undefined
  /** Resolves when a change may have moved its ETag: that wakes a held request. */
  changed: (ms: number, signal: AbortSignal) => Promise<void>
  tagged?: { tag: string, etag: string }
}

/** Each facets route's parameters: the list's filters, `by`, and paging. */
function facetsParameters (what: What): string[] {
  return [...NARROWED_BY[what], 'by', 'after', 'limit', 'wait']
}

function facetsQuerystring (what: What) {
  const by = byNamesOf(what)
  const qs = querystringOfFields(facetsParameters(what).filter((f) => f !== 'by'))
  return Type.Object({
    by: literals(by, { description: `The field whose distinct values to count: ${by.join(', ')}${what === 'collect' ? ' (module for contributor)' : ''}.`, examples: [by[0] as string] }),
    ...qs.properties
  }, { additionalProperties: false })
}

const OVERVIEW_ABOUT: Record<Overview, { summary: string, description: string, parameters: string[] }> = {
  nodes: {
    summary: 'A row per node: its entries in each bucket, its out-of-shape keys, its last write and its modules per state.',
    description: 'A row per node that the first token of a key of needs, applied or collect names (a node named only by out-of-shape keys too), sorted by node, paged by `after` (a node) and `limit`. ',
    parameters: ['node', 'after', 'limit', 'wait']
  },
  modules: {
    summary: 'A row per module on a node, with its provisioning state: `?state=pending` is what is not applied yet, anywhere.',
    description: 'A row per node and module that has a need or an applied entry, sorted by node then module, paged by `after` (`<node>.<module>`) and `limit`; its state compares the NATS servers\' timestamps of its needs and its applied entry. ',
    parameters: ['node', 'module', 'state', 'after', 'limit', 'wait']
  }
}

type Obtain = (url: string, maxBytes: number, ask: () => UrlRequest) => UrlRequest

/** Facets, nodes and modules, a plugin of their own (their request cache is theirs). */
export const glance = fp<RouteDeps>(async (app, deps) => { registerOverviewRoutes(app, deps) }, { name: 'glance', fastify: '5.x', dependencies: ['access'], encapsulate: true })

function registerOverviewRoutes (server: FastifyInstance, deps: RouteDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>()
  /** The requests of recent URLs, for the answer size they were read for. */
  const keptRequests = new RecentlyUsed<UrlRequest, number>({ maxBytes: 4 * 1024 * 1024, maxEntries: 1024, bytesOf: (_fromUrl, url) => keptRequestBytes(url) })
  const answer: Obtain = (url, maxBytes, ask) => keptRequests.obtain(url, maxBytes, ask)
  registerFacetsRoutes(server, deps, answer)

  for (const what of ['nodes', 'modules'] as const) {
    const url = `/v1/${what}`
    const about = OVERVIEW_ABOUT[what]
    app.get(url, {
      schema: {
        tags: ['at a glance'],
        operationId: `list${what[0]?.toUpperCase()}${what.slice(1)}`,
        summary: about.summary,
        description: `${about.description}The same document as the verb answers for {"what":"${what}"}; it carries no revision or cursor (it spans buckets), and its ETag moves only when the answer would change: send it back in If-None-Match to get 304.`,
        querystring: querystringOfFields(about.parameters),
        response: {
          200: json(`The ${what} answer.`, annotation(what === 'nodes' ? NodesAnswer : ModulesAnswer, '$id'), what === 'nodes' ? NODES_EXAMPLE : MODULES_EXAMPLE, ANSWER_HEADERS),
          304: notModified,
          400: badRequest(refusal(() => readRequest({ what: 'modules', state: 'done' }))),
          ...errorResponses
        }
      }
    }, async (request, reply) => {
      const maxBytes = deps.maxAnswerBytes()
      const fromUrl = answer(requestKey(request), maxBytes, () => {
        const { wait, ...parameters } = request.query as Record<string, unknown>
        const overviewRequest = readOverviewParameters(what, parameters, `GET ${url}`, about.parameters)
        const overviews = deps.provisioning.overviews
        return { kept: overviews.keep(overviewRequest, { defaultLimit: DEFAULT_LIMIT, maxBytes }), wait: readWait(wait), changed: async (ms, signal) => await overviews.changed(overviewRequest, ms, signal) }
      })
      return await sendTagged(request, reply, fromUrl, maxBytes, deps)
    })
  }

  registerRowRoutes(server, deps)
}

/** `GET /v1/{what}/facets`: the distinct values of one field, the verb's list request with `by`. */
function registerFacetsRoutes (server: FastifyInstance, deps: RouteDeps, answer: Obtain): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>()
  for (const what of WHATS) {
    const url = `/v1/${what}/facets`
    app.get(url, {
      config: accessOf(what),
      schema: {
        tags: ['at a glance'],
        operationId: `facets${what[0]?.toUpperCase()}${what.slice(1)}`,
        summary: `The distinct values of one field of the ${what} entries, with how many entries hold each.`,
        description: `The values of \`by\` among the entries of bucket \`${BUCKETS[what]}\` that the filter keeps, sorted by their UTF-8 bytes, each with its count and the last revision that touched it; ` +
          `\`outOfShape\` counts the out-of-shape keys the filter keeps. Paged by \`after\` (a value) and \`limit\` (${DEFAULT_LIMIT} unless asked). ` +
          'The verb answers the same document for the list\'s request with `by`. A kind named `facets` is read with `/v1/registry?kind=facets`. Carries an ETag; send it back in If-None-Match to get 304 while nothing changed.',
        querystring: facetsQuerystring(what),
        response: {
          200: json(`The ${what} facets.`, annotation(Facets[what], '$id'), FACETS_EXAMPLES[what], ANSWER_HEADERS),
          304: notModified,
          400: badRequest(refusal(() => readParameters(what, { by: 'name' }, `GET ${url}`, facetsParameters(what)))),
          ...errorResponses
        }
      }
    }, async (request, reply) => {
      const maxBytes = deps.maxAnswerBytes()
      const fromUrl = answer(requestKey(request), maxBytes, () => {
        const { wait, ...parameters } = request.query as Record<string, unknown>
        const bucketRequest = readParameters(what, parameters, `GET ${url}`, facetsParameters(what))
        if (bucketRequest.by === undefined) throw badRequestOf('by', `GET ${url} counts the values of one field: give by = ${FACET_BY[what].join(', ')}`)
        return { kept: deps.provisioning.keep(bucketRequest, { defaultLimit: DEFAULT_LIMIT, maxBytes }), wait: readWait(wait), changed: async (ms, signal) => await deps.provisioning.changed([bucketRequest], ms, signal) }
      })
      return await sendTagged(request, reply, fromUrl, maxBytes, deps)
    })
  }
}

/** The ETag of the request's answer now: made again only when its tag moved. */
function etagNow (fromUrl: UrlRequest, maxBytes: number): string {
  const tag = fromUrl.kept.tag()
  if (fromUrl.tagged?.tag !== tag) fromUrl.tagged = { tag, etag: etagOf(tag, maxBytes) }
  return fromUrl.tagged.etag
}

/** Holds the request while `wait` and If-None-Match say so (docs/following-changes.md), then sends the answer tagged. */
async function sendTagged (request: Parameters<typeof sendAnswer>[0], reply: Parameters<typeof sendAnswer>[1], fromUrl: UrlRequest, maxBytes: number, deps: RouteDeps): Promise<ReturnType<typeof sendAnswer>> {
  if (fromUrl.wait !== undefined) {
    needsWhat(false, request.headers['if-none-match'], false)
    if (await hold(request, reply, deps, { ms: fromUrl.wait, etag: () => etagNow(fromUrl, maxBytes), changed: fromUrl.changed })) return reply
  }
  return sendAnswer(request, reply, etagNow(fromUrl, maxBytes), () => fromUrl.kept.answer().bytes)
}

/** The path's tokens judged as the verb judges the same fields (a segment no token could hold is 400 naming it). */
function pathRequest (what: Overview, params: Record<string, string>, fields: readonly string[], url: string): OverviewRequest {
  const overviewRequest = readRequest({ what, ...params }) as OverviewRequest
  for (const field of fields) {
    if (overviewRequest.filter[field] === undefined) throw badRequestOf(field, `the path gives no ${field}; GET ${url} takes ${fields.join(' and ')}`)
  }
  return overviewRequest
}

/** One row's answer, held by `wait` with If-None-Match like every answer with an ETag (docs/following-changes.md). */
async function sendRow (request: Parameters<typeof sendAnswer>[0], reply: Parameters<typeof sendAnswer>[1], deps: RouteDeps, overviewRequest: OverviewRequest, url: string, rowOf: () => { json: string, tag: string }): Promise<ReturnType<typeof sendAnswer>> {
  const { wait, ...parameters } = request.query as Record<string, unknown>
  readParameters('registry', parameters, `GET ${url}`, [])
  const fromUrl: UrlRequest = {
    kept: { tag: () => rowOf().tag, answer: () => { const row = rowOf(); return new Answer(row.json, row.tag) } },
    wait: readWait(wait),
    changed: async (ms, signal) => await deps.provisioning.overviews.changed(overviewRequest, ms, signal)
  }
  // A row's ETag is its digest alone: the bus's max payload does not cut one row.
  return await sendTagged(request, reply, fromUrl, 0, deps)
}

/** `GET /v1/nodes/{node}` and `GET /v1/modules/{node}/{module}`: one row, 404 when there is none. */
function registerRowRoutes (server: FastifyInstance, deps: RouteDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>()
  const token = (field: 'node' | 'module') => Type.String({ ...FilterValues[field], description: `The ${field} (one key token).` })
  app.get('/v1/nodes/:node', {
    schema: {
      tags: ['at a glance'],
      operationId: 'getNode',
      summary: 'One node\'s row: its entries in each bucket, its out-of-shape keys, its last write and its modules per state.',
      description: 'The row `GET /v1/nodes` gives the node. Carries an ETag that moves only when the row would change. A node named `events` is read with `/v1/nodes?node=events` (`/v1/nodes/events` streams the rows).',
      params: Type.Object({ node: token('node') }, { additionalProperties: false }),
      querystring: querystringOfFields(['wait']),
      response: {
        200: json('The node\'s row.', ROW_SCHEMAS.node.$id, NODE_EXAMPLE, ANSWER_HEADERS),
        304: notModified,
        400: badRequest(refusal(() => readRequest({ what: 'nodes', node: 'g 14' }))),
        404: refused('No key of needs, applied or collect names the node.', NODE_NOT_FOUND_EXAMPLE),
        ...errorResponses
      }
    }
  }, async (request, reply) => {
    const overviewRequest = pathRequest('nodes', request.params as Record<string, string>, ['node'], '/v1/nodes/{node}')
    const node = overviewRequest.filter['node']?.[0] as string
    return await sendRow(request, reply, deps, overviewRequest, '/v1/nodes/{node}', () => deps.provisioning.overviews.node(node))
  })
  app.get('/v1/modules/:node/:module', {
    schema: {
      tags: ['at a glance'],
      operationId: 'getModule',
      summary: 'One module on one node, with its provisioning state.',
      description: `The row \`GET /v1/modules\` gives the module on the node; its state is one of ${MODULE_STATES.join(', ')}. Carries an ETag that moves only when the row would change.`,
      params: Type.Object({ node: token('node'), module: token('module') }, { additionalProperties: false }),
      querystring: querystringOfFields(['wait']),
      response: {
        200: json('The module\'s row.', ROW_SCHEMAS.module.$id, MODULE_EXAMPLE, ANSWER_HEADERS),
        304: notModified,
        400: badRequest(refusal(() => readRequest({ what: 'modules', node: 'ace', module: 'gitea.x' }))),
        404: refused('Neither needs nor applied holds the module on the node (a contributor of collect alone is no module).', MODULE_NOT_FOUND_EXAMPLE),
        ...errorResponses
      }
    }
  }, async (request, reply) => {
    const overviewRequest = pathRequest('modules', request.params as Record<string, string>, ['node', 'module'], '/v1/modules/{node}/{module}')
    const [node, module] = [overviewRequest.filter['node']?.[0] as string, overviewRequest.filter['module']?.[0] as string]
    return await sendRow(request, reply, deps, overviewRequest, '/v1/modules/{node}/{module}', () => deps.provisioning.overviews.module(node, module))
  })
}
