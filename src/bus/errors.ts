// The one mapping of domain error codes to the micro protocol's error codes (docs/verb.md).

import type { ErrorCode } from '../domain/wire/errors.js'

export const MICRO_CODE: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  // The bus grants by NATS account, never by token: the verb answers neither; mapped for completeness.
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 400,
  CURSOR_EXPIRED: 410,
  NOT_READY: 503,
  BUCKET_MISSING: 503,
  INTERNAL: 500
}
