// Builds the REST gateway from its dependencies; never listens (startService does).

import cors from '@fastify/cors'
import fp from 'fastify-plugin'
import helmet, { type HelmetOptions } from 'helmet'
import type { IncomingMessage, ServerResponse } from 'node:http'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyPluginAsync, type FastifyReply } from 'fastify'
import { badRequest } from '../domain/wire/errors.js'
import type { Provisioning } from '../domain/answers/provisioning.js'
import type { RegistryRun } from '../domain/wire/schemas.js'
import type { Views } from '../domain/follow/views.js'
import type { Metrics } from '../metrics.js'
import { access, refusalOf } from './access.js'
import { clientRefusal, fastifyRefusal, noRoute, quoted, rawResponse, refuseMethod, replyError } from './errors.js'
import type { FollowedViews } from './stream-of-request.js'
import { lazyChildLogger } from './lazy-logger.js'
import { Pool } from './holds.js'
import { brokenEscape } from './query-string.js'
import { unsent } from './unsent.js'
import { SCHEMA_COMPILERS, SHARED_SCHEMAS, type VerbState } from './schemas.js'
import { documents } from './routes/documents.js'
import { events } from './routes/events.js'
import type { EventsOptions } from './streams.js'
import { glance } from './routes/glance.js'
import { operations } from './routes/operations.js'
import { page } from './routes/page.js'
import { provisioning } from './routes/provisioning.js'
import { token } from './routes/token.js'
import type { TlsPair } from '../settings/tls-files.js'
import type { Token } from '../settings/tokens-file.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** `ok`, `not_modified` or the error code: the metrics' outcome label. */
    outcome: string
    /** performance.now() when the request's first hook ran; 0: no hook ran (a refusal before routing). */
    startedAt: number
  }
}

export interface AppDeps {
  provisioning: Provisioning
  views: Views
  writer: { readonly last: RegistryRun | undefined }
  metrics: Metrics
  log: FastifyBaseLogger
  corsOrigins: readonly string[]
  version: string
  /** The most bytes one answer may take (the bus connection's max payload, read per request). */
  maxAnswerBytes: () => number
  /** Whether the verb is served, for readiness. */
  verb: () => VerbState
  /** The bearer tokens now (docs/access.md); absent: the gateway is open. */
  tokens?: () => readonly Token[]
  /** Serve HTTPS only, with this certificate and key. */
  https?: TlsPair
  /** The event streams' bounds (docs/following-changes.md); absent: HTTP_MAX_STREAMS' default. */
  events?: EventsOptions
  /** Requests held by `wait` at most (HTTP_MAX_WAITS, default 1000). */
  maxWaits?: number
  /** Connections at most (holds.ts' connectionBound); absent: Node's default, none. */
  maxConnections?: number
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Ends the held requests (event streams, waits) whose token `tokens` (read again) no longer has, or no longer lets read what they hold. */
    recheckHeld: (tokens: readonly Token[]) => void
  }
}

/** HTTP_MAX_STREAMS' and HTTP_MAX_WAITS' default. */
const MAX_HELD = 1000

/** The log levels at which a debug line is written. */
const WRITES_DEBUG = new Set(['debug', 'trace'])

/** The methods the gateway takes; a CORS preflight (OPTIONS) is answered by @fastify/cors before these refusals. */
const READS = new Set(['GET', 'HEAD'])

/** Node's limit on a request's headers, request line included: no parameter is ever longer. */
const MAX_REQUEST_LINE = 16 * 1024

/**
 * An HTTP/2 request's headers as HTTP/1.1 would count them (a line each: name, ": ", value, CRLF),
 * pseudo-headers standing in for the request line, so that both face one bound. Node's HTTP/2
 * takes up to 64 KiB of them (what it announces as its header list size); HTTP/1.1 stops at 16 KiB.
 */
function headerBytes (rawHeaders: readonly string[]): number {
  let bytes = 0
  for (let i = 0; i < rawHeaders.length; i += 2) bytes += (rawHeaders[i]?.length ?? 0) + (rawHeaders[i + 1]?.length ?? 0) + 4
  return bytes
}

/** A matcher for a route path: `:param` is one segment, `*` the rest. */
function pathPattern (url: string): RegExp {
  const source = url.split('/').map((part) => part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('/')
  return new RegExp(`^${source}$`)
}

export async function buildApp (deps: AppDeps): Promise<FastifyInstance> {
  const app = createFastify(deps)
  app.decorateRequest('outcome', 'ok')
  app.decorateRequest('startedAt', 0)
  if (deps.maxConnections !== undefined) boundConnections(app, deps.maxConnections)
  answerHooks(app, deps)
  await app.register(unsent, { maxAnswerBytes: deps.maxAnswerBytes, log: deps.log })
  const refuseUnread = refusals(app)
  await app.register(requestLine(deps.corsOrigins, refuseUnread))
  await app.register(access, { tokens: deps.tokens, metrics: deps.metrics })
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema)
  // The resources' routes, one plugin each (routes/): the documents first, which see every route after them.
  await app.register(documents, { version: deps.version })
  await app.register(page)
  const { streams, waits } = heldPools(app, deps)
  await app.register(provisioning, { ...deps, waits })
  await app.register(glance, { ...deps, waits })
  await app.register(token, { withoutTokens: deps.tokens === undefined })
  // A stream asks the views only this, beside Provisioning.
  const { views } = deps
  const followed: FollowedViews = { status: (what) => views.byWhat[what].status(), held: (what) => views.byWhat[what].read(), connected: () => views.connected() }
  await app.register(events, { ...deps, ...deps.events, views: followed, streams })
  await app.register(operations, deps)
  return app
}

/** The fastify instance: its transport, logging, router limits, and the refusals of what never reaches a route. */
function createFastify (deps: AppDeps): FastifyInstance {
  // HTTPS speaks HTTP/2 and HTTP/1.1, chosen by ALPN: a browser holds its many event streams over
  // one HTTP/2 connection where HTTP/1.1 gives it six per origin. Typed as the HTTP/1 server the
  // gateway is written against: node:http2's compatibility API answers the same calls, and where
  // it does not (a stream's connection), routes/events.ts asks which one it has.
  const transport: object = deps.https === undefined ? {} : { http2: true, https: { allowHTTP1: true, ...deps.https } }
  return Fastify({
    ...transport,
    // No loggerInstance: fastify given one listens for every response's end to log it, which the
    // gateway never does (no line per request at info; one at debug, in answerHooks), at ~1.5 µs a
    // request (bench/RESULTS.md, HTTP). Each request's logger, which fastify's own warnings use
    // too, is still the service's: made from deps.log, lazily. Only fastify's instance logger is
    // silent; the gateway logs its listening itself.
    childLoggerFactory: (_silent, bindings, options) => lazyChildLogger(deps.log, bindings, options),
    schemaController: SCHEMA_COMPILERS,
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: 'x-request-id',
    // The router never judges a parameter's length: the route's schema does, naming the field, on
    // every route alike (Node's header limit, 16 KiB, bounds the whole request line anyway).
    routerOptions: { maxParamLength: MAX_REQUEST_LINE },
    // A path fastify cannot read (a broken %-escape) is refused in the same error body as the rest;
    // the path alone is quoted, never the query, which may carry an access_token.
    frameworkErrors: (err, request, reply) => {
      const refusal = fastifyRefusal(err)
      void replyError(reply, refusal.code === 'BAD_REQUEST' ? badRequest(undefined, `${quoted(request.url.split('?')[0] ?? '')} is not a valid URL path: a %-escape is broken; escape reserved characters completely, like %2F for /`) : refusal)
    },
    // What Node refuses before fastify sees a request (431, 408, bytes that are not HTTP) is said in
    // the service's error body too, and counted by its code.
    clientErrorHandler: (err: Error & { code?: string }, socket) => {
      if (err.code === 'ECONNRESET' || socket.destroyed) return
      const refusal = clientRefusal(err)
      deps.metrics.observe('http', 'unmatched', refusal.code, 0)
      if (socket.writable) socket.write(rawResponse(refusal))
      socket.destroy(err)
    }
  })
}

/** At most `maxConnections` connections; one refused at the bound makes room by closing the idle keep-alive ones, so that the next one (a probe's) is taken. */
function boundConnections (app: FastifyInstance, maxConnections: number): void {
  const server = app.server as typeof app.server & { closeIdleConnections?: () => void }
  server.maxConnections = maxConnections
  server.on('drop', () => server.closeIdleConnections?.())
}

/** What every answer carries and counts: the security headers and request id, and its metrics (and a debug line) when it is handed to Node. */
function answerHooks (app: FastifyInstance, deps: AppDeps): void {
  // Hooks on every request take a callback, not a promise: a promise each was measurable under load.
  const security = securityHeaders({
    contentSecurityPolicy: {
      // Helmet's defaults, with nothing fetched from outside (the Swagger page is served offline)
      // and no upgrade of the page's requests, which would break it over plain loopback HTTP.
      directives: {
        'font-src': ["'self'", 'data:'],
        'style-src': ["'self'", "'unsafe-inline'"],
        'upgrade-insecure-requests': null
      }
    },
    // Only an HTTPS gateway may tell browsers to keep to HTTPS.
    strictTransportSecurity: deps.https !== undefined
  })
  app.addHook('onRequest', (request, reply, done) => {
    request.startedAt = performance.now()
    reply.headers(security).header('x-request-id', request.id)
    done()
  })
  // A request is counted when its answer is handed to Node, as the verb counts at its reply, not
  // on 'finish': with an onResponse hook fastify holds each request until the socket has taken its
  // bytes, which under load outlived V8's young generation and cost 7 µs a request (RESULTS.md).
  app.addHook('onSend', (request, reply, payload, done) => {
    const route = request.routeOptions.url ?? 'unmatched'
    const outcome = reply.statusCode >= 500 && request.outcome === 'ok' ? 'INTERNAL' : request.outcome
    const ms = request.startedAt === 0 ? 0 : performance.now() - request.startedAt
    deps.metrics.observe('http', route, outcome, ms / 1000)
    // The path alone: the query string may carry an access_token. The token is named, never shown.
    // The line is built only when it is written: on the hot path it never is.
    if (WRITES_DEBUG.has(request.log.level)) request.log.debug({ method: request.method, path: request.url.split('?')[0], tokenName: request.tokenName, statusCode: reply.statusCode, ms }, 'request answered')
    done(null, payload)
  })
}

type RefuseUnread = (method: string, url: string, reply: FastifyReply) => FastifyReply

/** The error handler and the not-found handler; gives the refusal of a method or path no route takes (405 with Allow on a known path, else 404). */
function refusals (app: FastifyInstance): RefuseUnread {
  // Every route here only reads: any other method on a known path is 405 rather than 404.
  const readOnly: RegExp[] = []
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    if (methods.includes('GET')) readOnly.push(pathPattern(route.url))
  })
  app.setErrorHandler<FastifyError>((err, request, reply) => {
    const refusal = fastifyRefusal(err)
    if (refusal.code === 'INTERNAL') request.log.error({ err }, 'the gateway failed to answer')
    return replyError(reply, refusal)
  })
  const refuseUnread: RefuseUnread = (method, url, reply) => {
    const path = url.split('?')[0] ?? url
    if (method !== 'GET' && method !== 'HEAD' && readOnly.some((pattern) => pattern.test(path))) {
      reply.header('allow', 'GET, HEAD')
      return replyError(reply, refuseMethod(method, path))
    }
    return replyError(reply, noRoute(method, path))
  }
  app.setNotFoundHandler((request, reply) => refuseUnread(request.method, request.url, reply))
  return refuseUnread
}

/**
 * What every request meets before its route's token is checked (access.ts depends on it): CORS,
 * then the request line's checks, whose refusals so carry the CORS headers a console in a browser
 * needs to read them, and helmet's (set by answerHooks, on every request).
 */
function requestLine (corsOrigins: readonly string[], refuseUnread: RefuseUnread): FastifyPluginAsync {
  return fp(async (app: FastifyInstance) => {
    // No origins configured: no CORS headers at all, and no CORS hook on every request. Otherwise
    // only the listed origins, reflected.
    if (corsOrigins.length > 0) {
      await app.register(cors, {
        origin: (origin, cb) => { cb(null, origin !== undefined && corsOrigins.includes(origin) ? origin : false) },
        methods: ['GET', 'HEAD'],
        exposedHeaders: ['ETag', 'X-Request-Id'],
        maxAge: 600
      })
    }
    app.addHook('onRequest', (request, reply, done) => {
      // A client never sends a fragment: a raw # is no query separator, and no key token holds one.
      // A refusal sent here ends the request: `done` is not called.
      const url = request.url
      const query = url.indexOf('?')
      // Judged only when the query holds a '%': the hot path's URLs seldom do.
      const broken = query !== -1 && url.includes('%', query) ? brokenEscape(url.slice(query + 1)) : undefined
      if (request.raw.httpVersionMajor === 2 && headerBytes(request.raw.rawHeaders) > MAX_REQUEST_LINE) {
        replyError(reply, clientRefusal({ code: 'HPE_HEADER_OVERFLOW' }))
      } else if (url.includes('#')) {
        replyError(reply, badRequest(undefined, 'the request line holds a raw "#": a fragment is never sent, and no parameter starts after it; write the query after "?" and escape a # inside a value as %23'))
      } else if (broken !== undefined) {
        // The parameter is named, never its value, which may be an access_token.
        replyError(reply, badRequest(broken, `${quoted(broken)}: a %-escape in its value is broken; escape reserved characters completely (two hex digits of UTF-8 each, like %3A for :)`))
      } else if (!READS.has(request.method)) {
        // Before the body is read: a method the gateway does not take is 405 whatever its body or type.
        refuseUnread(request.method, request.url, reply)
      } else {
        done()
      }
    })
  }, { name: 'request-line', fastify: '5.x' })
}

/** The held requests' pools, one per limit, shared fairly between callers (holds.ts says the rule); a token reloaded ends what it no longer lets hold, and a stop answers the held waits. */
function heldPools (app: FastifyInstance, deps: AppDeps): { streams: Pool, waits: Pool } {
  const streams = new Pool(deps.events?.maxStreams ?? MAX_HELD, 'HTTP_MAX_STREAMS', 'event streams')
  const waits = new Pool(deps.maxWaits ?? MAX_HELD, 'HTTP_MAX_WAITS', 'waiting requests')
  app.decorate('recheckHeld', (tokens: readonly Token[]) => {
    for (const pool of [streams, waits]) {
      for (const held of pool.holds()) {
        const refusal = held.admitted === undefined ? undefined : refusalOf(held.admitted, tokens)
        if (refusal !== undefined) held.end({ refused: refusal })
      }
    }
  })
  // A stop answers the held waits at once, as at their end (the streams end in routes/events.ts' own hook).
  app.addHook('preClose', async () => {
    for (const held of waits.holds()) held.end({ early: true })
  })
  return { streams, waits }
}

/**
 * Helmet's headers, computed once: they are the same for every answer. @fastify/helmet ran helmet
 * (parsing its policy) in two hooks on every request, which cost 40 % of the gateway's throughput.
 */
function securityHeaders (options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {}
  const res = {
    setHeader: (name: string, value: string) => { headers[name.toLowerCase()] = value },
    removeHeader: (name: string) => { delete headers[name.toLowerCase()] }
  }
  helmet(options)({} as IncomingMessage, res as unknown as ServerResponse, () => {})
  return headers
}
