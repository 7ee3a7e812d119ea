// The one place where refusals become HTTP: domain error codes to status, fastify's own
// validation failures read again by the domain's readQuery so that they say what the verb says.

import type { FastifyReply } from 'fastify'
import type { What } from '../domain/buckets.js'
import { asProvisionerError, badRequest, ProvisionerError, type ErrorCode } from '../domain/errors.js'
import { readQuery } from '../domain/request.js'
import { RequestFields } from '../domain/schemas.js'

export const HTTP_STATUS: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  NOT_FOUND: 404,
  CURSOR_EXPIRED: 410,
  NOT_READY: 503,
  BUCKET_MISSING: 503,
  INTERNAL: 500
}

/** What a route tells the error handler about itself (fastify route `config`). */
export interface RouteFacts {
  what: What
  /** The query string's parameters. */
  parameters: readonly string[]
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

/** A number where the query string holds one, so that the domain judges the value, not its text form. */
function asNumber (value: unknown): unknown {
  if (typeof value !== 'string' || value.trim() === '') return value
  const n = Number(value)
  return Number.isFinite(n) ? n : value
}

/**
 * Why the input of a route did not validate, in the domain's words: a parameter no question takes
 * is named with the ones the route takes; any other fault (a field that does not narrow this
 * question, a value that will not do) is found again by readQuery, as the verb would say it.
 */
export function refuseInput (route: string, facts: RouteFacts, context: string | undefined, input: Record<string, unknown>, fallback: string): ProvisionerError {
  const takes = facts.parameters
  for (const name of context === 'querystring' ? Object.keys(input) : []) {
    if (!takes.includes(name) && (takes.length === 0 || name === 'what' || !(name in RequestFields))) {
      return badRequest(name, `"${name}" is not a parameter of GET ${route}; it takes ${takes.length === 0 ? 'none' : takes.join(', ')}`)
    }
  }
  const request: Record<string, unknown> = { what: facts.what }
  for (const [name, value] of Object.entries(input)) request[name] = name === 'limit' ? asNumber(value) : value
  try {
    readQuery(request)
  } catch (err) {
    return asProvisionerError(err)
  }
  return badRequest(undefined, `the request does not fit GET ${route}: ${fallback}`)
}

/** 405 for a method a read-only route does not take. */
export function refuseMethod (method: string, path: string): ProvisionerError {
  return badRequest(undefined, `${method} is not allowed on ${path}: the gateway only reads; use GET or HEAD`)
}

/** 404 for a path no route serves. */
export function noRoute (method: string, path: string): ProvisionerError {
  return new ProvisionerError('NOT_FOUND', `no route serves ${method} ${path}; the routes are listed in /openapi.json and shown at /docs`)
}
