// The OpenAPI document (@fastify/swagger, generated from the route schemas) and the Swagger UI
// page (@fastify/swagger-ui, its assets served from the installed package, nothing fetched outside).

import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { LICENSE } from '../version.js'

interface Parameter { in: string, example?: unknown, schema?: object }
interface Paths { paths?: Record<string, { get?: { parameters?: Parameter[] } } | undefined> }

/**
 * Swagger UI fills "Try it out" with each parameter's `example`, so that a first Execute would ask a
 * narrowed question; optional query parameters keep their example in their schema's `examples`
 * instead (shown, not filled in).
 */
function unfilled<T extends object> (doc: T): T {
  for (const item of Object.values((doc as Paths).paths ?? {})) {
    for (const p of item?.get?.parameters ?? []) {
      if (p.in !== 'query' || p.example === undefined) continue
      p.schema = { ...p.schema, examples: [p.example] }
      delete p.example
    }
  }
  return doc
}

export async function registerDocs (app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'mesh-provisioner',
        version,
        description: 'The mesh provisioner\'s REST gateway: read-only HTTP over the same answers as the bus verb ' +
          '`mesh-provisioner.provisioning`: the registry (which domain answers which kind of placeholder), what each module ' +
          'needs, what is applied where, and the items of every collection. Every refusal is `{"error":{"code","message","field"}}`.',
        // npm's UNLICENSED (no licence granted) is no SPDX identifier; SPDX names such terms LicenseRef-.
        license: { name: LICENSE, identifier: LICENSE === 'UNLICENSED' ? 'LicenseRef-UNLICENSED' : LICENSE }
      },
      // The gateway that serves this document, wherever it is deployed (behind a proxy too).
      servers: [{ url: '/', description: 'The gateway serving this document.' }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'A token of the gateway\'s tokens file (HTTP_TOKENS_FILE; `npm run token` makes one). A token whose `nodes` is a list reads the registry and those nodes only, named in `node` or the path; /metrics takes a token with `"metrics": true`. An event stream also takes it as `access_token` in the query.'
          }
        }
      },
      tags: [
        { name: 'provisioning', description: 'The four questions, as the verb answers them.' },
        { name: 'operations', description: 'Liveness, readiness and metrics.' }
      ]
    },
    transformObject: (document) => 'openapiObject' in document ? unfilled(document.openapiObject) : document.swaggerObject,
    // Shared schemas keep their $id as their component name rather than def-0, def-1...
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}` }
  })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    validatorUrl: false,
    uiConfig: { tryItOutEnabled: false, displayOperationId: false }
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}
