// The `wait` of a list route (SPEC §8): how long a question with `since` may be held until
// something it would show changes.

import { readDuration } from '../duration.js'
import { badRequest } from '../domain/wire/errors.js'

/** The longest a request may be held: below the idle timeouts of common proxies. */
export const MAX_WAIT_MS = 60_000

const TAKES = 'a duration of at most 60s, like 500ms, 5s or 30 (a bare number is seconds)'

/** Reads `wait` (undefined when absent or empty); it needs `since`, since only a cursor says what "changed" means. */
export function readWait (text: unknown, since: boolean): number | undefined {
  if (text === undefined || text === '') return undefined
  const value = typeof text === 'string' ? text.trim() : ''
  // A repeated parameter arrives as a list: it is no duration.
  const parsed = readDuration(value)
  if (parsed === undefined || parsed > MAX_WAIT_MS) {
    throw badRequest('wait', `wait: ${JSON.stringify(text)} will not do; it takes ${TAKES}`)
  }
  if (!since) throw badRequest('wait', 'wait holds a question until something changed after its cursor; give since (the cursor of an earlier answer) with it')
  return parsed
}
