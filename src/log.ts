// The process's logger. Whatever a line carries, a secret in it is censored at every level
// (docs/running.md): the Authorization header, an access_token, passwords and tokens by their usual names.

import { pino, type DestinationStream, type Logger } from 'pino'

const REDACTED_PATHS = [
  'authorization', '*.authorization', 'headers.authorization', '*.headers.authorization',
  'access_token', '*.access_token', 'query.access_token', '*.query.access_token',
  'pass', '*.pass', 'password', '*.password',
  'token', '*.token', 'tokens', '*.tokens'
]

/** The process's logger; `destination` is stdout unless a test catches the lines. */
export function createLog (level: string, base: Record<string, string>, destination?: DestinationStream): Logger {
  const options = { level, base, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }
  return destination === undefined ? pino(options) : pino(options, destination)
}
