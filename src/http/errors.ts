// The one place where refusals become HTTP: domain error codes to status, and the gateway's own
// refusals (a method it does not take, a path no route serves) in the same error body.

import type { FastifyReply } from 'fastify'
import { badRequest, ProvisionerError, type ErrorCode } from '../domain/errors.js'

export const HTTP_STATUS: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CURSOR_EXPIRED: 410,
  NOT_READY: 503,
  BUCKET_MISSING: 503,
  INTERNAL: 500
}

/** Sends the error body; `status` overrides the code's own only for transport refusals (405, 413...). */
export function replyError (reply: FastifyReply, error: ProvisionerError, status = HTTP_STATUS[error.code]): FastifyReply {
  reply.request.outcome = error.code
  return reply
    .code(status)
    .header('content-type', 'application/json; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(JSON.stringify(error.toBody()))
}

/** 405 for a method a read-only route does not take. */
export function refuseMethod (method: string, path: string): ProvisionerError {
  return badRequest(undefined, `${method} is not allowed on ${path}: the gateway only reads; use GET or HEAD`)
}

/** 404 for a path no route serves. */
export function noRoute (method: string, path: string): ProvisionerError {
  return new ProvisionerError('NOT_FOUND', `no route serves ${method} ${path}; the routes are listed in /openapi.json and shown at /docs`)
}
