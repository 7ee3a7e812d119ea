// Who may read the gateway (SPEC §9): one onRequest hook checks the bearer token of every route but
// the open ones, and one onRoute hook puts the bearer scheme, 401 and 403 into each checked route's
// OpenAPI entry. Routes added later (the events routes) are checked by default, not by remembering.

import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { Type } from 'typebox'
import { ProvisionerError } from '../domain/wire/errors.js'
import type { RefusalReason } from '../metrics.js'
import { replyError } from './errors.js'
import { findToken, forbidden, type Reading, type Token } from './tokens.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by the access hook: what a token must allow to read this route; absent: the route is open. */
    access?: 'reader' | 'metrics'
  }
  interface FastifyRequest {
    /** The name of the token the request was let in with, for the log; never the token. */
    tokenName: string | undefined
    /** What the request was let in to read, and with which token (by its digest): an event stream is judged again when the tokens change. */
    admitted: Admission | undefined
  }
}

export const REALM = 'mesh-provisioner'

export interface Admission {
  sha256: string
  reading: Reading
}

/** Why `tokens` (read again on SIGHUP) no longer allow what was admitted: the token is gone (401) or no longer reads it (403); undefined while they do. */
export function refusalOf (admission: Admission, tokens: readonly Token[]): ProvisionerError | undefined {
  const token = tokens.find((t) => t.sha256 === admission.sha256)
  if (token === undefined) return new ProvisionerError('UNAUTHORIZED', 'the bearer token is not one the gateway knows any more (the tokens file was read again); ask the operator for one')
  const why = forbidden(token, admission.reading)
  return why === undefined ? undefined : new ProvisionerError('FORBIDDEN', why)
}

/** The routes anyone may read: the process's health, the documents and the page that shows them. */
function isOpen (url: string): boolean {
  return url === '/healthz' || url === '/readyz' || url === '/openapi.json' || url === '/asyncapi.json' || url === '/docs' || url.startsWith('/docs/')
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
const example = (code: 'UNAUTHORIZED' | 'FORBIDDEN', message: string | undefined) => new ProvisionerError(code, message ?? '').toBody()
const UNAUTHORIZED_EXAMPLE = example('UNAUTHORIZED', MISSING)
const FORBIDDEN_EXAMPLE = example('FORBIDDEN', forbidden({ name: 'ace', sha256: '', nodes: ['ace'], metrics: false }, { of: 'nodes', node: undefined }))
const METRICS_FORBIDDEN_EXAMPLE = example('FORBIDDEN', forbidden({ name: 'console', sha256: '', nodes: '*', metrics: false }, { of: 'metrics' }))

const refusedResponse = (description: string, example: unknown) => ({ description, content: { 'application/json': { schema: Type.Ref('ErrorBody'), example } } })

/** A route of the registry: readable by every token. */
function readsRegistry (request: FastifyRequest): boolean {
  const url = request.routeOptions.url ?? ''
  return /^\/v1\/registry(\/|$)/.test(url) || (request.params as Record<string, unknown>)['what'] === 'registry'
}

/** What the request reads, for the token's scope: the node comes from the path or the query. */
function readingOf (request: FastifyRequest): Reading {
  if (request.routeOptions.config.access === 'metrics') return { of: 'metrics' }
  if (readsRegistry(request)) return { of: 'registry' }
  const named = (request.params as Record<string, unknown>)['node'] ?? (request.query as Record<string, unknown>)['node']
  return { of: 'nodes', node: typeof named === 'string' && named !== '' ? named : undefined }
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

export function registerAccess (app: FastifyInstance, deps: AccessDeps): void {
  app.decorateRequest('tokenName', undefined)
  app.decorateRequest('admitted', undefined)

  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    if (isOpen(route.url) || methods.every((m) => m === 'OPTIONS')) {
      // Said in the document too: these routes take no token.
      if (route.schema !== undefined && route.schema.hide !== true) route.schema = { ...route.schema, security: [] }
      return
    }
    const access = route.url === '/metrics' ? 'metrics' : 'reader'
    route.config = { ...route.config, access }
    if (route.schema === undefined || route.schema.hide === true) return
    const scoped = access === 'metrics' || !/^\/v1\/registry(\/|$)/.test(route.url)
    route.schema = {
      ...route.schema,
      security: [{ bearer: [] }],
      response: {
        ...(route.schema.response as object | undefined),
        401: refusedResponse(`No bearer token, or one the gateway does not know (\`WWW-Authenticate: Bearer realm="${REALM}"\`).`, UNAUTHORIZED_EXAMPLE),
        ...(scoped
          ? {
              403: access === 'metrics'
                ? refusedResponse('The token does not read /metrics: the scraper\'s token has `"metrics": true`.', METRICS_FORBIDDEN_EXAMPLE)
                : refusedResponse('The token reads only some nodes and the request names none of them (in `node` or the path); the message names the nodes it may read.', FORBIDDEN_EXAMPLE)
            }
          : {})
      }
    }
  })

  if (deps.tokens === undefined) return
  const tokens = deps.tokens
  const refuse = (reply: FastifyReply, reason: RefusalReason, error: ProvisionerError): FastifyReply => {
    deps.metrics.refused(reason)
    if (error.code === 'UNAUTHORIZED') reply.header('www-authenticate', `Bearer realm="${REALM}"`)
    return replyError(reply, error)
  }

  app.addHook('onRequest', async (request, reply) => {
    // A CORS preflight carries no credentials by design: refusing it would stop the real request.
    if (request.method === 'OPTIONS' || request.routeOptions.config.access === undefined) return
    const given = presented(request)
    if (given === undefined || given === '') {
      return refuse(reply, 'missing', new ProvisionerError('UNAUTHORIZED', `${MISSING}${isEvents(request.routeOptions.url ?? '') ? ' or access_token=<token> in the query' : ''}`))
    }
    const token = findToken(tokens(), given)
    if (token === undefined) return refuse(reply, 'unknown', new ProvisionerError('UNAUTHORIZED', 'the bearer token is not one the gateway knows; ask the operator for one (npm run token makes it)'))
    request.tokenName = token.name
    const reading = readingOf(request)
    const why = forbidden(token, reading)
    if (why !== undefined) return refuse(reply, 'forbidden', new ProvisionerError('FORBIDDEN', why))
    request.admitted = { sha256: token.sha256, reading }
  })
}
