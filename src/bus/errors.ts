// The one mapping of domain error codes to the micro protocol's error codes (docs/verb.md). The bus
// grants by NATS account, never by token: the gateway's refusals of a token have no code here.

import type { ErrorCode } from '../domain/wire/errors.js'

export const MICRO_CODE: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  NOT_FOUND: 400,
  CURSOR_EXPIRED: 410,
  NOT_READY: 503,
  BUCKET_MISSING: 503,
  INTERNAL: 500
}
