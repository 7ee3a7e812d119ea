// Sends a pre-serialized answer as it is (the same bytes as the verb), with a strong ETag over
// those bytes, and 304 when the client already holds them.

import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'

/** A strong validator: the answer's bytes decide it, so a changed bucket changes it. */
export function etagOf (json: string): string {
  return `"${createHash('sha256').update(json).digest('base64url').slice(0, 32)}"`
}

/** Whether If-None-Match names this ETag (weak comparison, as RFC 9110 asks for GET and HEAD). */
function held (ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim()
    return t === '*' || t === etag || t === `W/${etag}`
  })
}

export function sendAnswer (request: FastifyRequest, reply: FastifyReply, json: string): FastifyReply {
  const etag = etagOf(json)
  reply.header('etag', etag).header('cache-control', 'no-cache')
  if (held(request.headers['if-none-match'], etag)) {
    request.outcome = 'not_modified'
    return reply.code(304).send()
  }
  return reply.header('content-type', 'application/json; charset=utf-8').send(json)
}
