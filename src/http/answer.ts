// Sends a pre-serialized answer as it is (the same bytes as the verb), with a strong ETag, and
// 304 when the client already holds it, without building the answer again.

import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * A strong validator without hashing the body: one URL's bytes are decided by the state the
 * domain answers from (its tag: bucket generation, revision, stale) and the size cut.
 */
export function etagOf (tag: string, maxBytes: number): string {
  return `"${tag.replace(/[^\w.-]/g, '')}-${maxBytes}"`
}

/** Whether If-None-Match names this ETag (weak comparison, as RFC 9110 asks for GET and HEAD). */
export function namesEtag (ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim()
    return t === '*' || t === etag || t === `W/${etag}`
  })
}

/** Answers 304 when the client holds `etag`; otherwise sends what `build` makes, tagged. */
export function sendAnswer (request: FastifyRequest, reply: FastifyReply, etag: string, build: () => string | Buffer): FastifyReply {
  reply.header('etag', etag).header('cache-control', 'no-cache')
  if (namesEtag(request.headers['if-none-match'], etag)) {
    request.outcome = 'not_modified'
    return reply.code(304).send()
  }
  return reply.header('content-type', 'application/json; charset=utf-8').send(build())
}
