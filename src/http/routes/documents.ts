// The OpenAPI document (@fastify/swagger, generated from the route schemas) and the Swagger UI
// page (@fastify/swagger-ui, its assets served from the installed package, nothing fetched outside).

import type { SwaggerOptions } from '@fastify/swagger'
import { defined } from '../../domain/defined.js'
import fp from 'fastify-plugin'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify'
import { LICENSE } from '../../version.js'
import { asyncApiText } from '../asyncapi-document.js'
import { SCHEMA_COMPILERS } from '../schemas.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI document of the gateway's routes, generated on the first call. */
    openapi: () => Promise<object>
  }
}

interface Parameter { in: string, example?: unknown, schema?: object }
interface Paths { paths?: Record<string, { get?: { parameters?: Parameter[] } } | undefined> }

/**
 * Swagger UI fills "Try it out" with each parameter's `example`, so that a first Execute would ask a
 * narrowed request; optional query parameters keep their example in their schema's `examples`
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

/** @fastify/swagger's options: the document's header, and how it is shaped. */
function swaggerOptions (version: string): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'mesh-provisioner',
        version,
        description: 'The mesh provisioner\'s REST gateway: read-only HTTP over the same answers as the bus verb ' +
          '`mesh-provisioner.provisioning`: the registry (which domain answers which kind of placeholder), what each module ' +
          'needs, what is applied where, and the items of every collection. Every refusal is `{"error":{"code","message","field"}}`. ' +
          'The verb, its discovery subjects and the event streams\' events are described by the AsyncAPI document, [/asyncapi.json](/asyncapi.json).',
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
            description: 'A token of the gateway\'s tokens file (HTTP_TOKENS_FILE; `npm run token` makes one). A token whose `nodes` is a list reads the registry and those nodes only: asking without `node` it gets them, naming another is 403; /metrics takes a token with `"metrics": true`. An event stream also takes it as `access_token` in the query.'
          }
        }
      },
      tags: [
        { name: 'provisioning', description: 'The four requests, as the verb answers them.' },
        { name: 'at a glance', description: 'The mesh at a glance: the distinct values of a field (facets), a row per node, a row per module on a node with its provisioning state.' },
        { name: 'access', description: 'Who the bearer token presented reads as.' },
        { name: 'operations', description: 'Liveness, readiness and metrics.' }
      ]
    },
    transformObject: (document) => 'openapiObject' in document ? unfilled(document.openapiObject) : document.swaggerObject,
    // Shared schemas keep their $id as their component name rather than def-0, def-1...
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}` }
  }
}

/**
 * The document of `routes`, as @fastify/swagger generates it inside the gateway: a fastify of its
 * own that holds only their definitions, with the gateway's shared schemas. It compiles neither
 * validators nor serializers: the routes are never served there.
 */
async function generate (app: FastifyInstance, routes: readonly RouteOptions[], version: string): Promise<object> {
  const { default: swagger } = await import('@fastify/swagger')
  const doc = Fastify({ exposeHeadRoutes: false, schemaController: SCHEMA_COMPILERS })
  try {
    await doc.register(swagger, swaggerOptions(version))
    for (const schema of Object.values(app.getSchemas())) doc.addSchema(schema)
    for (const route of routes) doc.route({ method: route.method, url: route.url, ...defined({ schema: route.schema, config: route.config }), handler: async () => {} })
    await doc.ready()
    return doc.swagger()
  } finally {
    await doc.close()
  }
}

/**
 * The documents (/openapi.json, /asyncapi.json) and the Swagger UI (/docs), open to anyone. Not
 * encapsulated: its onRoute hook sees every route the gateway registers after it, for the document.
 */
export const documents = fp<{ version: string }>(async (app, { version }) => { registerDocs(app, version) }, { name: 'documents', fastify: '5.x', dependencies: ['access'] })

function registerDocs (app: FastifyInstance, version: string): void {
  // The document is generated on its first request: @fastify/swagger and its modules (a YAML
  // library among them), registered at start, held ~0.9 MB in every process, most of which never
  // serve it. What it would see of each route from here on is kept until then (HEAD twins, which
  // it leaves out, are not).
  const routes: RouteOptions[] = []
  app.addHook('onRoute', (route) => { if (route.method !== 'HEAD') routes.push(route) })
  let document: Promise<object> | undefined
  app.decorate('openapi', async () => await (document ??= generate(app, routes, version)))
  app.get('/openapi.json', { config: { open: true }, schema: { hide: true } }, async () => await app.openapi())
  // Built on its first request too: most processes never serve it.
  let asyncApi: string | undefined
  app.get('/asyncapi.json', { config: { open: true }, schema: { hide: true } }, async (_request, reply) => {
    asyncApi ??= asyncApiText(version)
    return await reply.type('application/json; charset=utf-8').send(asyncApi)
  })

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
  app.get('/docs', { config: { open: true }, schema: { hide: true } }, serveUi)
  app.get('/docs/*', { config: { open: true }, schema: { hide: true } }, serveUi)
}

/** Headers of the UI's own answer that belong to its connection, not to the page. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'date', 'content-length'])

/** A fastify serving only the Swagger UI at /docs, reading the document of `app`. */
async function swaggerUi (app: FastifyInstance): Promise<FastifyInstance> {
  const [{ default: swagger }, { default: plugin }, document] = await Promise.all([import('@fastify/swagger'), import('@fastify/swagger-ui'), app.openapi()])
  const ui = Fastify()
  // The UI reads the document through @fastify/swagger: here, the one `app` generates, as it is.
  await ui.register(swagger, { transformObject: () => document })
  await ui.register(plugin, {
    routePrefix: '/docs',
    validatorUrl: false,
    uiConfig: { tryItOutEnabled: false, displayOperationId: false }
  })
  await ui.ready()
  return ui
}
