// Who may read the gateway (docs/access.md): one onRequest hook checks the bearer token of every route but
// those that declare themselves open (`config: { open: true }`, in their own module under routes/),
// and one onRoute hook puts the bearer scheme, 401 and 403 into each checked route's OpenAPI entry.
// A route is checked unless it says otherwise, so that a new one cannot be left open by forgetting;
// what it reads, when not the nodes' entries, it declares too (`config: { access: ... }`), never
// read off its URL.
// A token of some nodes that names none reads its own: the hook gives the query its nodes as
// `node`, on every route whose query string takes `node`, so each route answers exactly what the
// same request naming them would.

import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { RefusalReason } from '../metrics.js'
import { REALM, type Admission } from './admission.js'
import { errorBody, replyError, type AccessCode, type AccessRefusal } from './errors.js'
import { refused } from './responses.js'
import type { What } from '../domain/wire/key-shapes.js'
import type { Token } from '../settings/tokens-file.js'
import { findToken, forbidden, type Reading } from './tokens.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Declared by a route anyone may read without a token: the process's health, the documents, the page. */
    open?: boolean
    /**
     * What a token must allow to read this route: declared by a route that reads no nodes (`registry`
     * and `self`, read by every token; `metrics`, by the scraper's), else set to `reader` (the nodes'
     * entries, a scoped token's own) by the access hook; absent: the route is open.
     */
    access?: 'reader' | 'registry' | 'metrics' | 'self'
  }
  interface FastifyRequest {
    /** The name of the token the request was let in with, for the log; never the token. */
    tokenName: string | undefined
    /** The token the request was let in with. */
    token: Token | undefined
    /** What the request was let in to read, and with which token (by its digest): an event stream is judged again when the tokens change. */
    admitted: Admission | undefined
    /** The nodes a token of some nodes narrowed the query to, when it named none (see `requestKey`). */
    narrowedTo: readonly string[] | undefined
  }
}

/**
 * The text a request is kept under, for a route that keeps the requests it read by it: its
 * URL, and the nodes its token narrowed it to (the same URL asks less with such a token).
 */
export function requestKey (request: FastifyRequest): string {
  return request.narrowedTo === undefined ? request.url : `${request.url}#${request.narrowedTo.join(',')}`
}

/** A refusal of a token, the gateway's own (src/http/errors.ts): never a domain error. */
const refusal = (code: AccessCode, message: string): AccessRefusal => ({ code, message })

/** Why `tokens` (read again on SIGHUP) no longer allow what was admitted: the token is gone (401) or no longer reads it (403); undefined while they do. */
export function refusalOf (admission: Admission, tokens: readonly Token[]): AccessRefusal | undefined {
  const token = tokens.find((t) => t.sha256 === admission.sha256)
  if (token === undefined) return refusal('UNAUTHORIZED', 'the bearer token is not one the gateway knows any more (the tokens file was read again); ask the operator for one')
  const why = forbidden(token, admission.reading)
  return why === undefined ? undefined : refusal('FORBIDDEN', why)
}

/** Routes ending in /events: a browser's EventSource cannot set headers, so the query carries the token. */
function isEvents (url: string): boolean {
  return url.endsWith('/events')
}

export interface AccessDeps {
  /** The tokens now (they change on SIGHUP); absent: the gateway is open (loopback, or HTTP_AUTH=none). */
  tokens: (() => readonly Token[]) | undefined
  metrics: { refused (reason: RefusalReason): void }
}

const MISSING = 'this route takes a bearer token: send Authorization: Bearer <token>'
const example = (code: AccessCode, message: string | undefined) => errorBody(refusal(code, message ?? ''))
const UNAUTHORIZED_EXAMPLE = example('UNAUTHORIZED', MISSING)
const FORBIDDEN_EXAMPLE = example('FORBIDDEN', forbidden({ name: 'ace', sha256: '', nodes: ['ace'], metrics: false }, { of: 'nodes', nodes: ['g14'] }))
const METRICS_FORBIDDEN_EXAMPLE = example('FORBIDDEN', forbidden({ name: 'console', sha256: '', nodes: '*', metrics: false }, { of: 'metrics' }))

/** What a route of `what`'s entries declares it reads (`config`): the registry is read by every token, a bucket of nodes' entries by the tokens of those nodes. */
export function accessOf (what: What): { access: 'registry' | 'reader' } {
  return { access: what === 'registry' ? 'registry' : 'reader' }
}

/** Whether the route's query string takes `node`: then a token of some nodes that names none is given its own. */
function takesNode (request: FastifyRequest): boolean {
  const querystring = request.routeOptions.schema?.querystring as { properties?: Record<string, unknown> } | undefined
  return querystring?.properties?.['node'] !== undefined
}

/** The nodes a request names in its path or query (a repeated parameter names several; empty names none). */
function namedNodes (request: FastifyRequest): string[] {
  const inPath = (request.params as Record<string, unknown>)['node']
  const inQuery = (request.query as Record<string, unknown>)['node']
  const named = [inPath, ...(Array.isArray(inQuery) ? inQuery as unknown[] : [inQuery])]
  return [...new Set(named.filter((n): n is string => typeof n === 'string' && n !== ''))]
}

/** What the request reads, for the token's scope: the nodes come from the path or the query. */
function readingOf (request: FastifyRequest): Reading {
  const access = request.routeOptions.config.access
  if (access === 'registry' || access === 'metrics' || access === 'self') return { of: access }
  const nodes = namedNodes(request)
  return { of: 'nodes', nodes: nodes.length === 0 ? undefined : nodes }
}

function presented (request: FastifyRequest): string | undefined {
  const query = request.query as Record<string, unknown>
  const fromQuery = isEvents(request.routeOptions.url ?? '') ? query['access_token'] : undefined
  // The query's token is the transport's, not a filter: the route's own schema never sees it.
  if (fromQuery !== undefined) delete query['access_token']
  const header = request.headers.authorization
  if (header !== undefined) return /^Bearer +(\S+) *$/i.exec(header)?.[1] ?? ''
  return typeof fromQuery === 'string' ? fromQuery : undefined
}

/**
 * Who may read, as a plugin that every route sees (fastify-plugin): it decorates the request
 * (`tokenName`, `token`, `admitted`, `narrowedTo`) and checks each route's token; the parts that
 * read those decorations name it among their dependencies. It follows the request line's checks
 * (app.ts), so that their refusals come first.
 */
export const access = fp<AccessDeps>(async (app, deps) => { registerAccess(app, deps) }, { name: 'access', fastify: '5.x', dependencies: ['request-line'] })

export function registerAccess (app: FastifyInstance, deps: AccessDeps): void {
  app.decorateRequest('tokenName', undefined)
  app.decorateRequest('token', undefined)
  app.decorateRequest('admitted', undefined)
  app.decorateRequest('narrowedTo', undefined)
  app.addHook('onRoute', describeAccess)
  if (deps.tokens !== undefined) app.addHook('onRequest', admission(deps.tokens, deps.metrics))
}

/** Whether the route is open: it says so itself, or it is @fastify/cors' preflight route. */
function isOpen (route: RouteOptions): boolean {
  const methods = Array.isArray(route.method) ? route.method : [route.method]
  return route.config?.open === true || methods.every((m) => m === 'OPTIONS')
}

/** Gives a checked route what a token must allow to read it, and says in its OpenAPI entry whether it takes one and how it is refused. */
function describeAccess (route: RouteOptions): void {
  if (isOpen(route)) {
    // Said in the document too: these routes take no token.
    if (route.schema !== undefined && route.schema.hide !== true) route.schema = { ...route.schema, security: [] }
    return
  }
  const access = route.config?.access ?? 'reader'
  route.config = { ...route.config, access }
  if (route.schema === undefined || route.schema.hide === true) return
  // Every token reads the registry and itself: only the nodes' entries and /metrics refuse one (403).
  const scoped = access === 'metrics' || access === 'reader'
  route.schema = {
    ...route.schema,
    security: [{ bearer: [] }],
    response: {
      ...(route.schema.response as object | undefined),
      401: refused(`No bearer token, or one the gateway does not know (\`WWW-Authenticate: Bearer realm="${REALM}"\`).`, UNAUTHORIZED_EXAMPLE),
      ...(scoped
        ? {
            403: access === 'metrics'
              ? refused('The token does not read /metrics: the scraper\'s token has `"metrics": true`.', METRICS_FORBIDDEN_EXAMPLE)
              : refused('The token reads only some nodes and the request names another (in `node` or the path); the message names the nodes it may read. Naming none, such a token reads its own nodes.', FORBIDDEN_EXAMPLE)
          }
        : {})
    }
  }
}

/** The onRequest hook that checks a checked route's token against `tokens` now, and what it lets the request read. */
function admission (tokens: () => readonly Token[], metrics: AccessDeps['metrics']) {
  const refuse = (reply: FastifyReply, reason: RefusalReason, error: AccessRefusal): FastifyReply => {
    metrics.refused(reason)
    return replyError(reply, error)
  }
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    // A CORS preflight carries no credentials by design: refusing it would stop the real request.
    if (request.method === 'OPTIONS' || request.routeOptions.config.access === undefined) return
    const given = presented(request)
    if (given === undefined || given === '') {
      return refuse(reply, 'missing', refusal('UNAUTHORIZED', `${MISSING}${isEvents(request.routeOptions.url ?? '') ? ' or access_token=<token> in the query' : ''}`))
    }
    const token = findToken(tokens(), given)
    if (token === undefined) return refuse(reply, 'unknown', refusal('UNAUTHORIZED', 'the bearer token is not one the gateway knows; ask the operator for one (npm run token makes it)'))
    request.tokenName = token.name
    request.token = token
    let reading = readingOf(request)
    if (reading.of === 'nodes' && reading.nodes === undefined && token.nodes !== '*' && takesNode(request)) {
      // Named none: the token's own nodes, as if the query had named them all.
      (request.query as Record<string, unknown>)['node'] = [...token.nodes]
      request.narrowedTo = token.nodes
      reading = { of: 'nodes', nodes: token.nodes }
    }
    const why = forbidden(token, reading)
    if (why !== undefined) return refuse(reply, 'forbidden', refusal('FORBIDDEN', why))
    request.admitted = { sha256: token.sha256, reading }
  }
}
