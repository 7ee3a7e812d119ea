// The provisioning routes of SPEC §5: thin adapters that read the query string with the domain's
// reader, ask the domain and send its serialized answer untouched.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { BUCKETS, WHATS, shapeOf, type What } from '../domain/buckets.js'
import type { Provisioning } from '../domain/provisioning.js'
import { readParameters, readQuery } from '../domain/request.js'
import { Answers, MAX_LIMIT } from '../domain/schemas.js'
import { etagOf, sendAnswer } from './answer.js'
import { ANSWER_EXAMPLES, BUCKET_MISSING_EXAMPLE, INTERNAL_EXAMPLE, NOT_FOUND_EXAMPLE, REGISTRY_ENTRY_EXAMPLE, refusal } from './examples.js'
import { DEFAULT_LIMIT, KindParams, annotation, listParameters, RegistryEntry, querystringOf } from './schemas.js'
import { readWait } from './wait.js'

export interface RouteDeps {
  provisioning: Provisioning
  /** The most bytes one answer may take: the bus's max payload, so both faces cut alike. */
  maxAnswerBytes: () => number
}

const ABOUT: Record<What, string> = {
  registry: 'Which domain answers which kind of placeholder, and where a client finds the values.',
  needs: 'What each module on each node needs provisioned, by kind and name.',
  applied: 'What is applied on each node, per module.',
  collect: 'The items each contributor adds to each collection on each node (e.g. shell:zsh:normal).'
}

/** Headers every answer carries, for the OpenAPI document. */
const ANSWER_HEADERS = {
  ETag: Type.String({ description: "A strong validator of the answer's bytes; send it in If-None-Match to get 304 while nothing changed." }),
  'Cache-Control': Type.String({ description: '`no-cache`: keep the answer, but ask again with If-None-Match before using it.' })
}

/** A JSON response of a shared schema, with one example, described for the OpenAPI document. */
function json (description: string, $id: string, example: unknown, headers?: typeof ANSWER_HEADERS) {
  return { description, ...(headers === undefined ? {} : { headers }), content: { 'application/json': { schema: Type.Ref($id), example } } }
}

const refused = (description: string, example: unknown) => json(description, 'ErrorBody', example)

const badRequest = (example: unknown) => refused('A parameter that the route does not take, or a value that will not do; the message names it and what would have worked.', example)

const errorResponses = {
  500: refused('The service failed to answer; the fault is logged.', INTERNAL_EXAMPLE),
  503: refused('The bucket is missing (it is served as soon as it appears) or still loading.', BUCKET_MISSING_EXAMPLE)
}

/**
 * The route schemas describe the query string and path for the OpenAPI document; the domain's
 * reader alone judges them, so that a refusal says what the verb says for the same field.
 */
const judgedByTheDomain = () => () => true

const notModified = { type: 'null', description: 'Not modified: the answer still has the ETag named in If-None-Match.', headers: ANSWER_HEADERS }

export function registerRoutes (server: FastifyInstance, deps: RouteDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>()
  for (const what of WHATS) {
    const url = `/v1/${what}`
    app.get(url, {
      validatorCompiler: judgedByTheDomain,
      schema: {
        tags: ['provisioning'],
        operationId: `list${what[0]?.toUpperCase()}${what.slice(1)}`,
        summary: ABOUT[what],
        description: `The ${what} answer from bucket \`${BUCKETS[what]}\` (keys \`${shapeOf(what)}\`): entries sorted by key, ` +
          `keys out of shape listed with the reason, at most \`limit\` entries (${DEFAULT_LIMIT} unless asked), cut with \`cut\` and \`next\` ` +
          'when longer. The same document as the verb `mesh-provisioner.provisioning` answers for the same filter. ' +
          'Carries an ETag; send it back in If-None-Match to get 304 while nothing changed.',
        querystring: querystringOf(what),
        response: {
          200: json(`The ${what} answer.`, annotation(Answers[what], '$id'), ANSWER_EXAMPLES[what], ANSWER_HEADERS),
          304: notModified,
          400: badRequest(refusal(() => readQuery({ what, limit: MAX_LIMIT + 1 }))),
          ...errorResponses
        }
      }
    }, async (request, reply) => {
      const { wait: waitText, ...parameters } = request.query as Record<string, unknown>
      const query = readParameters(what, parameters, `GET ${url}`, listParameters(what))
      const wait = readWait(waitText, query.since !== undefined)
      if (query.since !== undefined) {
        await deps.provisioning.settle(query)
        if (wait !== undefined) {
          const gone = new AbortController()
          reply.raw.once('close', () => { gone.abort() })
          await deps.provisioning.changed({ ...query, since: query.since }, wait, gone.signal)
        }
      }
      const maxBytes = deps.maxAnswerBytes()
      const etag = etagOf(deps.provisioning.version(query), maxBytes)
      return sendAnswer(request, reply, etag, () => deps.provisioning.ask(query, { defaultLimit: DEFAULT_LIMIT, maxBytes }).json)
    })
  }

  app.get('/v1/registry/:kind', {
    validatorCompiler: judgedByTheDomain,
    schema: {
      tags: ['provisioning'],
      operationId: 'getRegistryKind',
      summary: 'Which domain answers one kind of placeholder.',
      description: 'One registry entry: the answer stored for this kind (its `value` says the owning module and the bucket and key shape, or the verb). Carries an ETag like the lists.',
      params: KindParams,
      querystring: Type.Object({}, { additionalProperties: false }),
      response: {
        200: json('The registry entry of the kind.', RegistryEntry.$id, REGISTRY_ENTRY_EXAMPLE, ANSWER_HEADERS),
        304: notModified,
        400: badRequest(refusal(() => readQuery({ what: 'registry', kind: 'db password' }))),
        404: refused('No domain answers this kind.', NOT_FOUND_EXAMPLE),
        ...errorResponses
      }
    }
  }, async (request, reply) => {
    const { kind } = readQuery({ what: 'registry', kind: request.params.kind }).filter
    readParameters('registry', request.query, 'GET /v1/registry/:kind', [])
    const entry = deps.provisioning.entry('registry', kind as string)
    return sendAnswer(request, reply, etagOf(entry.version, 0), () => entry.json)
  })
}
