// Builds the REST gateway from its dependencies; never listens (startService does).

import cors from '@fastify/cors'
import helmet, { type HelmetOptions } from 'helmet'
import type { IncomingMessage, ServerResponse } from 'node:http'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify'
import { asProvisionerError, badRequest } from '../domain/errors.js'
import type { Provisioning } from '../domain/provisioning.js'
import type { RegistryRun } from '../domain/schemas.js'
import type { Views } from '../domain/views.js'
import type { Metrics } from '../metrics.js'
import { registerAccess } from './access.js'
import { registerDocs } from './docs.js'
import { noRoute, refuseMethod, replyError } from './errors.js'
import { registerOperations } from './operations.js'
import { registerRoutes } from './routes.js'
import { SHARED_SCHEMAS, type VerbState } from './schemas.js'
import type { TlsPair } from './tls.js'
import type { Token } from './tokens.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** `ok`, `not_modified` or the error code: the metrics' outcome label. */
    outcome: string
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
  /** The bearer tokens now (SPEC §9); absent: the gateway is open. */
  tokens?: () => readonly Token[]
  /** Serve HTTPS only, with this certificate and key. */
  https?: TlsPair
}

/** A matcher for a route path: `:param` is one segment, `*` the rest. */
function pathPattern (url: string): RegExp {
  const source = url.split('/').map((part) => part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('/')
  return new RegExp(`^${source}$`)
}

export async function buildApp (deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.https === undefined ? {} : { https: deps.https }),
    loggerInstance: deps.log,
    // The answers are the hot path: no log line per request at info (one at debug, below).
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: 'x-request-id',
    // A path fastify cannot read (a broken %-escape) is refused in the same error body as the rest.
    frameworkErrors: (err, _request, reply) => {
      void replyError(reply, badRequest(undefined, `${err.message}; escape reserved characters completely, like %2F for /`), 400)
    }
  })
  app.decorateRequest('outcome', 'ok')

  // Every route here only reads: any other method on a known path is 405 rather than 404.
  const readOnly: RegExp[] = []
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    if (methods.includes('GET')) readOnly.push(pathPattern(route.url))
  })

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
    reply.headers(security).header('x-request-id', request.id)
    done()
  })
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched'
    const outcome = reply.statusCode >= 500 && request.outcome === 'ok' ? 'INTERNAL' : request.outcome
    deps.metrics.observe('http', route, outcome, reply.elapsedTime / 1000)
    // The path alone: the query string may carry an access_token. The token is named, never shown.
    request.log.debug({ method: request.method, path: request.url.split('?')[0], tokenName: request.tokenName, statusCode: reply.statusCode, ms: reply.elapsedTime }, 'request answered')
    done()
  })

  app.setErrorHandler<FastifyError>((err, request, reply) => {
    const status = err.statusCode ?? 500
    if (status >= 400 && status < 500) return replyError(reply, badRequest(undefined, err.message), status)
    const refusal = asProvisionerError(err)
    if (refusal.code === 'INTERNAL') request.log.error({ err }, 'the gateway failed to answer')
    return replyError(reply, refusal)
  })

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? request.url
    if (request.method !== 'GET' && request.method !== 'HEAD' && readOnly.some((pattern) => pattern.test(path))) {
      reply.header('allow', 'GET, HEAD')
      return replyError(reply, refuseMethod(request.method, path), 405)
    }
    return replyError(reply, noRoute(request.method, path))
  })

  await app.register(cors, {
    // No origins configured: no CORS headers at all. Otherwise only the listed origins, reflected.
    origin: deps.corsOrigins.length === 0 ? false : (origin, cb) => { cb(null, origin !== undefined && deps.corsOrigins.includes(origin) ? origin : false) },
    methods: ['GET', 'HEAD'],
    exposedHeaders: ['ETag', 'X-Request-Id'],
    maxAge: 600
  })
  // After CORS, so that a refusal carries the CORS headers a console in a browser needs to read it.
  registerAccess(app, { tokens: deps.tokens, metrics: deps.metrics })
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema)
  await registerDocs(app, deps.version)
  registerRoutes(app, deps)
  registerOperations(app, deps)
  return app
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
