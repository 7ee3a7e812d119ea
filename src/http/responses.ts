// The pieces every answering route's OpenAPI entry is made of (the answer's headers, a JSON
// response of a shared schema, the refusals), and what those routes are given: one module, so that
// the route modules under routes/ describe their answers alike.

import { Type } from '../vendor/typebox.js'
import type { Provisioning } from '../domain/answers/provisioning.js'
import { defined } from '../domain/defined.js'
import { BUCKET_MISSING_EXAMPLE, INTERNAL_EXAMPLE } from './examples.js'
import type { WaitDeps } from './wait.js'

export interface RouteDeps extends WaitDeps {
  provisioning: Provisioning
  /** The most bytes one answer may take: the bus's max payload, so both faces cut alike. */
  maxAnswerBytes: () => number
}

/** Headers every answer carries, for the OpenAPI document. */
export const ANSWER_HEADERS = {
  ETag: Type.String({ description: "A strong validator of the answer's bytes; send it in If-None-Match to get 304 while nothing changed." }),
  'Cache-Control': Type.String({ description: '`no-cache`: keep the answer, but ask again with If-None-Match before using it.' })
}

/** A JSON response of a shared schema, with one example, described for the OpenAPI document. */
export function json (description: string, $id: string, example: unknown, headers?: typeof ANSWER_HEADERS) {
  return { description, ...defined({ headers }), content: { 'application/json': { schema: Type.Ref($id), example } } }
}

export const refused = (description: string, example: unknown) => json(description, 'ErrorBody', example)

export const badRequest = (example: unknown) => refused('A parameter that the route does not take, or a value that will not do; the message names it and what would have worked.', example)

export const errorResponses = {
  500: refused('The service failed to answer; the fault is logged.', INTERNAL_EXAMPLE),
  503: refused('The bucket is missing (it is served as soon as it appears) or still loading; or, with `wait`, this instance holds as many requests as HTTP_MAX_WAITS allows and this caller its even share of them (then `Retry-After` says when to try again).', BUCKET_MISSING_EXAMPLE)
}

export const notModified = { type: 'null', description: 'Not modified: the answer still has the ETag named in If-None-Match.', headers: ANSWER_HEADERS }
