// The provisioning routes of docs/http.md: thin adapters that read the query string with the domain's
// reader, ask the domain and send its serialized answer untouched.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Type } from '../../vendor/typebox.js'
import { BUCKETS, FIELDS, WHATS, keyOf, shapeOf, type Fields, type What } from '../../domain/wire/key-shapes.js'
import { badRequest as badRequestOf } from '../../domain/wire/errors.js'
import { keptRequestBytes, type KeptRequest } from '../../domain/answers/provisioning.js'
import { RecentlyUsed } from '../../domain/answers/recently-used.js'
import { readParameters, readBucketRequest } from '../../domain/wire/request.js'
import { Answers, MAX_LIMIT } from '../../domain/wire/schemas.js'
import { accessOf, requestKey } from '../access.js'
import { etagOf, sendAnswer } from '../answer.js'
import { ANSWER_EXAMPLES, CURSOR_EXPIRED_EXAMPLE, ENTRY_EXAMPLES, NOT_FOUND_EXAMPLES, refusal } from '../examples.js'
import { ANSWER_HEADERS, badRequest, errorResponses, json, notModified, refused, type RouteDeps } from '../responses.js'
import { DEFAULT_LIMIT, ENTRY_SCHEMAS, annotation, entryParams, listParameters, querystringOf } from '../schemas.js'
import { hold, MAX_WAIT_MS, needsWhat, readWait, type Waiting } from '../wait.js'

const ABOUT: Record<What, string> = {
  registry: 'Which domain answers which kind of placeholder, and where a client finds the values.',
  needs: 'What each module on each node needs provisioned, by kind and name.',
  applied: 'What is applied on each node, per module.',
  collect: 'The items each contributor adds to each collection on each node (e.g. shell:zsh:normal).'
}

/** A list route's request as read from one URL, and the ETag of the tag it last answered. */
interface UrlRequest {
  kept: KeptRequest
  wait: number | undefined
  tagged?: { tag: string, etag: string }
}

/** The ETag of the request's answer now: made again only when its tag moved. */
function etagNow (fromUrl: UrlRequest, maxBytes: number): string {
  const tag = fromUrl.kept.tag()
  if (fromUrl.tagged?.tag !== tag) fromUrl.tagged = { tag, etag: etagOf(tag, maxBytes) }
  return fromUrl.tagged.etag
}

/** The lists and one-entry routes, a plugin of their own (their request cache is theirs). */
export const provisioning = fp<RouteDeps>(async (app, deps) => { registerRoutes(app, deps) }, { name: 'provisioning', fastify: '5.x', dependencies: ['access'], encapsulate: true })

function registerRoutes (server: FastifyInstance, deps: RouteDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>()
  /**
   * The requests of recent URLs, for the answer size they were read for (the bus's max payload may
   * change). Bounded by what they hold; their answers are the answer cache's to count.
   */
  const keptRequests = new RecentlyUsed<UrlRequest, number>({ maxBytes: 4 * 1024 * 1024, maxEntries: 1024, bytesOf: (_fromUrl, url) => keptRequestBytes(url) })
  for (const what of WHATS) {
    const url = `/v1/${what}`
    app.get(url, {
      // The registry's list is read by every token; a bucket's, by the tokens of its nodes.
      config: accessOf(what),
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
          400: badRequest(refusal(() => readBucketRequest({ what, limit: MAX_LIMIT + 1 }))),
          410: refused('`since` names another generation of the bucket (deleted and created again since), or a point older than the deletions this instance knows: ask the list again without `since` and follow its cursor.', CURSOR_EXPIRED_EXAMPLE),
          ...errorResponses
        }
      }
    }, async (request, reply) => {
      const maxBytes = deps.maxAnswerBytes()
      // A URL asked before is not read again: the same text is the same request.
      const text = requestKey(request)
      const fromUrl = keptRequests.obtain(text, maxBytes, () => {
        const { wait: waitText, ...parameters } = request.query as Record<string, unknown>
        const bucketRequest = readParameters(what, parameters, `GET ${url}`, listParameters(what))
        return { kept: deps.provisioning.keep(bucketRequest, { defaultLimit: DEFAULT_LIMIT, maxBytes }), wait: readWait(waitText) }
      })
      const { kept, wait } = fromUrl
      const bucketRequest = kept.request
      const since = bucketRequest.since
      if (since !== undefined) await deps.provisioning.catchUp(bucketRequest)
      if (wait !== undefined) {
        needsWhat(since !== undefined, request.headers['if-none-match'])
        const waiting: Waiting = since !== undefined
          ? { ms: wait, since: { ...bucketRequest, since } }
          : { ms: wait, etag: () => etagNow(fromUrl, maxBytes), moves: () => [bucketRequest] }
        if (await hold(request, reply, deps, waiting)) return reply
      }
      return sendAnswer(request, reply, etagNow(fromUrl, maxBytes), () => kept.answer().bytes)
    })
  }

  for (const what of WHATS) registerEntryRoute(app, what, deps)
}

const ENTRY_WAIT = Type.String({
  description: `With If-None-Match: hold the request while the entry still has that ETag, at most this long (\`500ms\`, \`5s\`, a bare number is seconds; at most ${MAX_WAIT_MS / 1000}s), then answer 200 with the entry as it is now, 304 when the wait ended with it unchanged, or 404 when it was deleted.`,
  examples: ['30s']
})

/** What a one-entry route says of itself in the OpenAPI document. */
const ONE_ENTRY: Record<What, { operationId: string, summary: string, notFound: string, invalid: Record<string, string> }> = {
  registry: { operationId: 'getRegistryKind', summary: 'Which domain answers one kind of placeholder.', notFound: 'No domain answers this kind.', invalid: { kind: 'db password' } },
  needs: { operationId: 'getNeed', summary: 'One need of one module on one node, by kind and name.', notFound: 'The node\'s module has no such need.', invalid: { node: 'ace', module: 'gitea', kind: 'secret', name: 'db.password' } },
  applied: { operationId: 'getApplied', summary: 'What is applied of one module on one node.', notFound: 'Nothing is applied of this module on this node.', invalid: { node: 'g 14', module: 'gitea' } },
  collect: { operationId: 'getCollectItem', summary: 'The item one contributor adds to one collection on one node.', notFound: 'The contributor adds no item to this collection on this node.', invalid: { node: 'n1', collection: 'shell:zsh:normal', contributor: 'gitea.x' } }
}

/**
 * `GET /v1/{what}/{...the key's fields}`: the one entry at that key, with an ETag that moves only
 * when the entry does (docs/http.md). Collections are named decoded, and encoded into the key here.
 */
function registerEntryRoute (server: FastifyInstance, what: What, deps: RouteDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>()
  const url = `/v1/${what}/${FIELDS[what].map((f) => `:${f}`).join('/')}`
  const about = ONE_ENTRY[what]
  app.get(url, {
    config: accessOf(what),
    schema: {
      tags: ['provisioning'],
      operationId: about.operationId,
      summary: about.summary,
      description: `One ${what} entry, at key \`${shapeOf(what)}\` of bucket \`${BUCKETS[what]}\`: the entry as the ${what} answer lists it. ` +
        'Carries an ETag that moves only when this entry changes; send it back in If-None-Match to get 304.',
      params: entryParams(what),
      querystring: Type.Object({ wait: Type.Optional(ENTRY_WAIT) }, { additionalProperties: false }),
      response: {
        200: json(`The ${what} entry.`, ENTRY_SCHEMAS[what].$id, ENTRY_EXAMPLES[what], ANSWER_HEADERS),
        304: notModified,
        400: badRequest(refusal(() => readBucketRequest({ what, ...about.invalid }))),
        404: refused(about.notFound, NOT_FOUND_EXAMPLES[what]),
        ...errorResponses
      }
    }
  }, async (request, reply) => {
    const { filter } = readBucketRequest({ what, ...(request.params as Record<string, string>) })
    const { wait: waitText, ...parameters } = request.query as Record<string, unknown>
    readParameters(what, parameters, `GET ${url}`, [])
    for (const field of FIELDS[what]) {
      // An empty segment counts as not given, like any zero value; a key has every token.
      if (filter[field] === undefined) throw badRequestOf(field, `the path gives no ${field}; GET ${url} takes every field of the key`)
    }
    const key = keyOf(what, Object.fromEntries(FIELDS[what].map((f) => [f, filter[f]?.[0]])) as Fields<typeof what>)
    const wait = readWait(waitText)
    if (wait !== undefined) {
      needsWhat(false, request.headers['if-none-match'], false)
      // Only a change of this key looks at the request.
      const waiting = { ms: wait, etag: () => etagOf(deps.provisioning.entry(what, key).tag, 0), moves: () => [{ what, filter }] }
      if (await hold(request, reply, deps, waiting)) return reply
    }
    const entry = deps.provisioning.entry(what, key)
    return sendAnswer(request, reply, etagOf(entry.tag, 0), () => entry.json)
  })
}
