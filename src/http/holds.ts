// Requests held open (event streams, `wait`) bounded in number and shared fairly between callers
// (SPEC §8 "Bounds"). The rule, one pool per limit: below the limit every request is held. At the
// limit, with n callers holding or asking, each caller's even share is floor(limit / n) (at least
// one): a caller at or over its share is refused (503 with Retry-After), and a caller under it is
// held by ending the oldest hold of the caller holding the most, when that one holds more than its
// share (else it is refused too). A caller is a token (by its digest); on a gateway without tokens,
// a remote address (behind a proxy: the proxy, which then shares one caller's room).

import type { FastifyRequest } from 'fastify'
import { ProvisionerError } from '../domain/wire/errors.js'
import type { Admission } from './access.js'

/** Why a hold was ended early: a newer caller's share, or the token no longer admitting it (the refusal to answer with). */
export type EndedBy = { share: true } | { refused: ProvisionerError }

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
      oldest.end({ share: true })
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
