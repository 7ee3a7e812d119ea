// The `wait` of docs/following-changes.md: how long a request may be held, and the holding itself, which every route
// with an ETag calls: with `since`, until something the request would show changes; with
// If-None-Match, until the answer's ETag moves. Only a change that could show looks at it.

import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Provisioning } from '../domain/answers/provisioning.js'
import type { Cursor } from '../domain/wire/cursor.js'
import { badRequest } from '../domain/wire/errors.js'
import { readDuration } from '../domain/wire/numbers.js'
import type { BucketRequest } from '../domain/wire/request.js'
import { namesEtag } from './answer.js'
import { replyError, type AccessRefusal } from './errors.js'
import { callerOf, RETRY_AFTER_S, type Hold, type Pool } from './holds.js'

/** The longest a request may be held: below the idle timeouts of common proxies. */
export const MAX_WAIT_MS = 60_000

const TAKES = 'a duration of at most 60s, like 500ms, 5s or 30 (a bare number is seconds)'

/** Reads `wait` (undefined when absent or empty). */
export function readWait (text: unknown): number | undefined {
  if (text === undefined || text === '') return undefined
  // A repeated parameter arrives as a list: it is no duration. Read whole: ` 5s` is none either.
  const parsed = typeof text === 'string' ? readDuration(text) : undefined
  if (parsed === undefined || parsed > MAX_WAIT_MS) {
    throw badRequest('wait', `wait: ${JSON.stringify(text)} will not do; it takes ${TAKES}`)
  }
  return parsed
}

/**
 * What a held request waits for: with `since`, a change the request would show after its cursor;
 * else a change of the answer's ETag, which If-None-Match names.
 */
export type Waiting =
  | { ms: number, since: BucketRequest & { since: Cursor } }
  | {
    ms: number
    /** The ETag the answer would carry now (it throws as the route would refuse). */
    etag: () => string
  } & ({
    /** The requests whose changes may move the ETag: only those look at the request. */
    moves: () => readonly BucketRequest[]
  } | {
    /** Resolves when a change may have moved the ETag (or after `ms`, or on `signal`): for answers that span buckets. */
    changed: (ms: number, signal: AbortSignal) => Promise<void>
  })

export interface WaitDeps {
  provisioning: Provisioning
  /** The held requests' pool (HTTP_MAX_WAITS). */
  waits: Pool
}

/** Refuses `wait` without what says what "changed" means; a route that takes no `since` (`takesSince` false) names If-None-Match alone. */
export function needsWhat (since: boolean, ifNoneMatch: string | undefined, takesSince = true): void {
  if (!since && ifNoneMatch === undefined) {
    throw badRequest('wait', takesSince
      ? 'wait holds a request until its answer changes: give since (the cursor of an earlier answer), or If-None-Match (the ETag of an earlier answer), with it'
      : 'wait holds this request until its answer changes: give If-None-Match (the ETag of an earlier answer) with it (this route takes no since)')
  }
}

/**
 * Holds the request as `waiting` says, at most its `ms` (docs/following-changes.md "`wait`"): an If-None-Match that
 * does not name the answer's ETag is not held at all. A held request counts in the pool of waits
 * (503 with Retry-After beyond, shared fairly between callers), and is let go early when another
 * caller's share needs its room (it then answers as at the wait's end) or refused when the tokens
 * read again no longer admit it. Gives true when it has answered the request itself (a refusal).
 */
export async function hold (request: FastifyRequest, reply: FastifyReply, deps: WaitDeps, waiting: Waiting): Promise<boolean> {
  const ifNoneMatch = request.headers['if-none-match']
  const unchanged = (): boolean => 'etag' in waiting && namesEtag(ifNoneMatch, waiting.etag())
  if ('etag' in waiting && !unchanged()) return false
  const gone = new AbortController()
  let refused: AccessRefusal | undefined
  const held: Hold = {
    caller: callerOf(request),
    admitted: request.admitted,
    end: (why) => {
      if ('refused' in why) refused = why.refused
      gone.abort()
    }
  }
  const full = deps.waits.admit(held)
  if (full !== undefined) {
    reply.header('retry-after', String(RETRY_AFTER_S))
    replyError(reply, full)
    return true
  }
  const abort = (): void => { gone.abort() }
  reply.raw.once('close', abort)
  try {
    const until = Date.now() + waiting.ms
    if ('since' in waiting) {
      await deps.provisioning.changed([waiting.since], waiting.ms, gone.signal)
    } else {
      // A change that leaves the ETag as it was (a conservative wake) holds the request again.
      do await ('changed' in waiting ? waiting.changed(until - Date.now(), gone.signal) : deps.provisioning.changed(waiting.moves(), until - Date.now(), gone.signal))
      while (!gone.signal.aborted && Date.now() < until && unchanged())
    }
  } finally {
    deps.waits.release(held)
    reply.raw.off('close', abort)
  }
  if (refused === undefined) return false
  replyError(reply, refused)
  return true
}
