// The operator's routes: liveness, readiness (per bucket, and the registry writer's last run) and
// Prometheus metrics.

import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Type } from '../../vendor/typebox.js'
import type { Metrics } from '../../metrics.js'
import { readiness, type ReadinessDeps } from '../readiness.js'
import { Health } from '../schemas.js'

export interface OperationsDeps extends ReadinessDeps {
  metrics: Metrics
  version: string
}

/** What even a probe can meet: a request the gateway cannot read. */
const UNREAD = {
  description: 'The request could not be read (431 headers too large, 400 a broken request line or escape); the body says which.',
  content: { 'application/json': { schema: Type.Ref('ErrorBody') } }
}

/** Health, readiness and metrics, a plugin of their own. */
export const operations = fp<OperationsDeps>(async (app, deps) => { registerOperations(app, deps) }, { name: 'operations', fastify: '5.x', dependencies: ['access'], encapsulate: true })

function registerOperations (app: FastifyInstance, deps: OperationsDeps): void {
  app.get('/healthz', {
    config: { open: true },
    schema: {
      tags: ['operations'],
      operationId: 'health',
      summary: 'Whether the process lives.',
      description: 'Always 200 while the process answers; says nothing of NATS (see /readyz).',
      response: { 200: Health, '4XX': UNREAD }
    }
  }, async (_request, reply) => {
    reply.header('cache-control', 'no-store')
    return { ok: true, version: deps.version }
  })

  app.get('/readyz', {
    config: { open: true },
    schema: {
      tags: ['operations'],
      operationId: 'readiness',
      summary: 'Whether this instance can answer.',
      description: 'Ready (200) when connected to NATS, every bucket\'s view is live or its bucket known absent (a missing bucket is answered 503 naming it, so it does not make the instance unready) and the verb is served; 503 otherwise. The body says which nats-server it is connected to and that server\'s known data-loss defect (worked around, naming the version that fixes it), whether the verb is served, per bucket its state, revision, key count and out-of-shape count, and the registry writer\'s last run.',
      response: {
        200: Type.Ref('Readiness', { description: 'Ready.' }),
        503: Type.Ref('Readiness', { description: 'Not ready: cut off from NATS, a view still loading, or the verb not served.' }),
        '4XX': UNREAD
      }
    }
  }, async (request, reply) => {
    const body = readiness(deps)
    // Not ready is an answer, not a fault: counted as such, never as INTERNAL.
    if (!body.ready) request.outcome = 'NOT_READY'
    return reply.code(body.ready ? 200 : 503).header('cache-control', 'no-store').send(body)
  })

  app.get('/metrics', {
    // Read by the scraper's token alone (`"metrics": true`).
    config: { access: 'metrics' },
    schema: {
      tags: ['operations'],
      operationId: 'metrics',
      summary: 'Prometheus metrics.',
      description: 'Requests and latency by face (bus, http) and route, view sizes and out-of-shape counts, registry writer runs, the NATS connection state, and the process defaults.',
      produces: ['text/plain'],
      response: {
        200: {
          description: 'The Prometheus text exposition format.',
          content: { 'text/plain': { schema: Type.String({ description: 'Prometheus text.' }) } }
        }
      }
    }
  }, async (_request, reply) => {
    const text = await deps.metrics.registry.metrics()
    return reply.header('content-type', deps.metrics.registry.contentType).header('cache-control', 'no-store').send(text)
  })
}
