// The one place where refusals become HTTP: domain error codes to status, the gateway's own
// refusals (of a token; of a method it does not take, a body too large, headers too large...) with
// codes of their own, fastify's and Node's refusals read into them, all in the same error body.

import type http from 'node:http'
import { createRequire } from 'node:module'
import type { FastifyError, FastifyReply } from 'fastify'
import { asProvisionerError, ERROR_CODES, ProvisionerError, type ErrorCode } from '../domain/wire/errors.js'
import { defined } from '../domain/defined.js'
import { FIELDS, type What } from '../domain/wire/key-shapes.js'
import { REALM } from './admission.js'

// Required, not imported: an ESM import of node:http reads every export, and its lazy WebSocket
// getters load Node's bundled undici, ~3 MB held by a process that never uses it (bench/RESULTS.md).
const { STATUS_CODES } = createRequire(import.meta.url)('node:http') as typeof http

/**
 * The gateway's refusals of a token (access.ts, docs/access.md): tokens are the gateway's alone, so
 * these are neither the domain's codes nor the bus's, which grants by NATS account.
 */
export const ACCESS_CODES = ['UNAUTHORIZED', 'FORBIDDEN'] as const
export type AccessCode = (typeof ACCESS_CODES)[number]
/** Refusals only HTTP makes: methods, sizes and timeouts are the transport's, never the domain's. */
const HTTP_ONLY_CODES = ['METHOD_NOT_ALLOWED', 'REQUEST_TIMEOUT', 'PAYLOAD_TOO_LARGE', 'URI_TOO_LONG', 'UNSUPPORTED_MEDIA_TYPE', 'HEADERS_TOO_LARGE'] as const
export type HttpCode = ErrorCode | AccessCode | (typeof HTTP_ONLY_CODES)[number]
/**
 * Every code the gateway's error body may carry (its ErrorBody schema lists them in this order):
 * the token's refusals after BAD_REQUEST, where the published documents have always listed them.
 */
export const HTTP_CODES: readonly HttpCode[] = [ERROR_CODES[0], ...ACCESS_CODES, ...ERROR_CODES.slice(1), ...HTTP_ONLY_CODES]

export const HTTP_STATUS: Record<HttpCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  CURSOR_EXPIRED: 410,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  HEADERS_TOO_LARGE: 431,
  NOT_READY: 503,
  BUCKET_MISSING: 503,
  INTERNAL: 500
}

/** The code of a client error fastify or Node answers by status alone; any other 4xx is a bad request. */
const CODE_OF_STATUS = new Map<number, HttpCode>(
  (['BAD_REQUEST', 'NOT_FOUND', ...HTTP_ONLY_CODES] as const).map((code) => [HTTP_STATUS[code], code])
)

/** A refusal as the error body carries it: a domain error, or one of the gateway's own. */
export interface Refusal {
  readonly code: HttpCode
  readonly message: string
  readonly field?: string | undefined
}

/** A refusal of a token: none (or one the gateway does not know, 401) or one that does not read what was asked (403); the message names the remedy. */
export interface AccessRefusal extends Refusal {
  readonly code: AccessCode
}

/** The error body as JSON (for the documents' examples). */
export function errorBody ({ code, message, field }: Refusal): { error: { code: HttpCode, message: string, field?: string } } {
  return { error: { code, message, ...defined({ field }) } }
}

/** The error body's JSON text. */
function errorText (refusal: Refusal): string {
  return JSON.stringify(errorBody(refusal))
}

/** Sends the error body with the status of its code; a 401 with the Bearer challenge (docs/access.md). */
export function replyError (reply: FastifyReply, error: Refusal): FastifyReply {
  reply.request.outcome = error.code
  if (error.code === 'UNAUTHORIZED') reply.header('www-authenticate', `Bearer realm="${REALM}"`)
  return reply
    .code(HTTP_STATUS[error.code])
    .header('content-type', 'application/json; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(errorText(error))
}

/** A fastify error (a body too large, of a type no parser takes, a broken escape...) as a refusal; a fault when it is no 4xx. */
export function fastifyRefusal (err: FastifyError): Refusal {
  const status = err.statusCode ?? 500
  if (status < 400 || status >= 500) return asProvisionerError(err)
  return { code: CODE_OF_STATUS.get(status) ?? 'BAD_REQUEST', message: err.message }
}

/** What Node refuses before a request reaches fastify (a header too large, a request too slow, bytes that are not HTTP). */
export function clientRefusal (err: { code?: string }): Refusal {
  if (err.code === 'HPE_HEADER_OVERFLOW') return { code: 'HEADERS_TOO_LARGE', message: 'the request\'s headers are larger than the gateway takes (16 KiB in all); send fewer or shorter headers' }
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return { code: 'REQUEST_TIMEOUT', message: 'the request did not arrive in time; send it again, whole' }
  return { code: 'BAD_REQUEST', message: 'the request is not HTTP/1.1 the gateway can read; send a well-formed request line and headers' }
}

/** The raw response for a refusal written on the socket, where no reply exists yet. */
export function rawResponse (refusal: Refusal): string {
  const body = errorText(refusal)
  const status = HTTP_STATUS[refusal.code]
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`
}

/** The most of a path a refusal quotes: enough to recognise it, never the whole of a long one. */
const QUOTED = 200

/** A path as a refusal quotes it. */
export function quoted (path: string): string {
  return path.length > QUOTED ? `${path.slice(0, QUOTED)}... (${path.length} characters)` : path
}

/** 405 for a method a read-only route does not take. */
export function refuseMethod (method: string, path: string): Refusal {
  return { code: 'METHOD_NOT_ALLOWED', message: `${method} is not allowed on ${quoted(path)}: the gateway only reads; use GET or HEAD` }
}

/** 404 for a path no route serves; a bucket's path with some of a key's fields names the list that filters by them. */
export function noRoute (method: string, path: string): ProvisionerError {
  const list = listOfPath(path)
  const hint = list === undefined ? '' : `: ${list.route} takes every field of the key, and ${list.url} lists the entries of the fields given`
  return new ProvisionerError('NOT_FOUND', `no route serves ${method} ${quoted(path)}${hint}; the routes are listed in /openapi.json and shown at /docs`)
}

/** `/v1/needs/ace/gitea` → the one-entry route and `/v1/needs?node=ace&module=gitea`; undefined for any other path. */
function listOfPath (path: string): { route: string, url: string } | undefined {
  const [root, v1, what, ...tokens] = path.replace(/\/+$/, '').split('/')
  if (root !== '' || v1 !== 'v1' || what === undefined || !Object.hasOwn(FIELDS, what) || tokens.length === 0) return undefined
  const fields = FIELDS[what as What]
  if (tokens.length >= fields.length || tokens.some((t) => t === '')) return undefined
  return { route: `/v1/${what}/${fields.map((f) => `{${f}}`).join('/')}`, url: `/v1/${what}?${tokens.map((t, i) => `${fields[i] as string}=${t}`).join('&')}` }
}
