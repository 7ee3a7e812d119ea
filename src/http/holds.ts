// Requests held open (event streams, `wait`) bounded in number and shared fairly between callers
// (docs/following-changes.md "Bounds"). The rule, one pool per limit: below the limit every request is held. At the
// limit, with n callers holding or asking, each caller's even share is floor(limit / n) (at least
// one): a caller at or over its share is refused (503 with Retry-After), and a caller under it is
// held by ending the oldest hold of the caller holding the most, when that one holds more than its
// share (else it is refused too). A caller is a token (by its digest); on a gateway without tokens,
// a remote address (behind a proxy: the proxy, which then shares one caller's room).

import type { FastifyRequest } from 'fastify'
import { ProvisionerError } from '../domain/wire/errors.js'
import type { Admission } from './admission.js'
import type { AccessRefusal } from './errors.js'

/** Why a hold was ended early: another caller's share or the service's stop (answered as at its end), or the token no longer admitting it (the refusal to answer with). */
export type EndedBy = { early: true } | { refused: AccessRefusal }

export interface Hold {
  readonly caller: string
  /** What the request was let in to read: held requests are judged again when the tokens change. */
  readonly admitted: Admission | undefined
  /** Ends what is held (answers the wait, ends the stream). */
  readonly end: (why: EndedBy) => void
}

/** When a refused client may try again (s). */
export const RETRY_AFTER_S = 5

/** Who a request counts as, for the even shares. */
export function callerOf (request: FastifyRequest): string {
  return request.admitted === undefined ? `address ${request.ip}` : `token ${request.admitted.sha256}`
}

export class Pool {
  /** Each caller's holds, oldest first (a Set keeps insertion order). */
  private readonly byCaller = new Map<string, Set<Hold>>()
  private held = 0

  constructor (
    /** The most holds (HTTP_MAX_STREAMS, HTTP_MAX_WAITS). */
    readonly limit: number,
    /** The setting that bounds it, for the refusal's words. */
    private readonly setting: string,
    /** What is held, for the refusal's words ("event streams", "waiting requests"). */
    private readonly what: string
  ) {}

  get size (): number {
    return this.held
  }

  /** Every hold, for a judgement of them all (SIGHUP). */
  * holds (): Generator<Hold> {
    for (const set of this.byCaller.values()) yield * [...set]
  }

  /**
   * Takes `hold` in, ending another caller's oldest when the rule says so; refuses with the error
   * to answer (503, with Retry-After) when the rule says no. `dryRun` judges without taking it in.
   */
  admit (hold: Hold, dryRun = false): ProvisionerError | undefined {
    if (this.held >= this.limit) {
      const mine = this.byCaller.get(hold.caller)?.size ?? 0
      const callers = this.byCaller.size + (mine === 0 ? 1 : 0)
      const share = Math.max(1, Math.floor(this.limit / callers))
      let top: Set<Hold> | undefined
      for (const set of this.byCaller.values()) if (top === undefined || set.size > top.size) top = set
      if (mine >= share || top === undefined || top.size <= share) {
        return new ProvisionerError('NOT_READY', `this instance holds ${this.held} ${this.what}, its most (${this.setting}), and this caller holds ${mine} of an even share of ${share}; try again in ${RETRY_AFTER_S} s or ask another instance`)
      }
      if (dryRun) return undefined
      const oldest = top.values().next().value as Hold
      this.release(oldest)
      oldest.end({ early: true })
    }
    if (dryRun) return undefined
    let set = this.byCaller.get(hold.caller)
    if (set === undefined) this.byCaller.set(hold.caller, (set = new Set()))
    set.add(hold)
    this.held++
    return undefined
  }

  /** Lets `hold` go; a hold let go already is left alone. */
  release (hold: Hold): void {
    const set = this.byCaller.get(hold.caller)
    if (set?.delete(hold) !== true) return
    this.held--
    if (set.size === 0) this.byCaller.delete(hold.caller)
  }
}

/** Connections kept beyond the held requests: probes (/healthz, /readyz), short requests, the docs. */
export const HEADROOM = 256
/** File descriptors kept for what is no connection: NATS, the files read on SIGHUP, the runtime's own. */
const FILES_KEPT = 64

export interface ConnectionBound {
  /** The server's maxConnections: beyond it Node refuses a connection at once, before it costs a file descriptor for long. */
  maxConnections: number
  maxStreams: number
  maxWaits: number
  /** Set when the file limit could not hold the limits asked: they were lowered, in proportion. */
  lowered?: { fileLimit: number }
}

/**
 * How many connections the gateway takes, so that held requests never take them all: every held
 * request holds a connection, and HEADROOM more are kept for the rest, below the process's file
 * limit (when it is known). A file limit too small for the limits asked lowers them in proportion,
 * since /healthz and /readyz must answer whatever is held.
 */
export function connectionBound (maxStreams: number, maxWaits: number, fileLimit: number | undefined): ConnectionBound {
  const wanted = maxStreams + maxWaits + HEADROOM
  if (fileLimit === undefined || fileLimit - FILES_KEPT >= wanted) return { maxConnections: wanted, maxStreams, maxWaits }
  const connections = Math.max(fileLimit - FILES_KEPT, 3)
  const held = Math.max(connections - HEADROOM, 2)
  const streams = Math.max(1, Math.floor(held * maxStreams / (maxStreams + maxWaits)))
  return { maxConnections: connections, maxStreams: streams, maxWaits: Math.max(1, held - streams), lowered: { fileLimit } }
}
