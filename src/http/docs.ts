// The OpenAPI document (@fastify/swagger, generated from the route schemas) and the Swagger UI
// page (@fastify/swagger-ui, its assets served from the installed package, nothing fetched outside).

import swagger from '@fastify/swagger'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
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
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  // The Swagger UI is built on the first request for it: registered at start, its plugin, static
  // file server and their modules held ~1.8 MB in every process, most of which never serve a page.
  let ui: Promise<FastifyInstance> | undefined
  const serveUi = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    ui ??= swaggerUi(app)
    const answer = await (await ui).inject({ method: request.method as 'GET' | 'HEAD', url: request.url, headers: request.headers })
    if (answer.statusCode === 404) {
      reply.callNotFound()
      return reply
    }
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) reply.header(name, value)
    }
    return reply.code(answer.statusCode).send(answer.rawPayload)
  }
  app.get('/docs', { schema: { hide: true } }, serveUi)
  app.get('/docs/*', { schema: { hide: true } }, serveUi)
}

/** Headers of the UI's own answer that belong to its connection, not to the page. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'date', 'content-length'])

/** A fastify serving only the Swagger UI at /docs, reading the document of `app`. */
async function swaggerUi (app: FastifyInstance): Promise<FastifyInstance> {
  const { default: plugin } = await import('@fastify/swagger-ui')
  const ui = Fastify()
  // The UI reads the document through @fastify/swagger: here, the one `app` generates, as it is.
  await ui.register(swagger, { transformObject: () => app.swagger() })
  await ui.register(plugin, {
    routePrefix: '/docs',
    validatorUrl: false,
    uiConfig: { tryItOutEnabled: false, displayOperationId: false }
  })
  await ui.ready()
  return ui
}
