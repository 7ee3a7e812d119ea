// A few provisioner clients at play, so that the demo's page, streams and `wait` show something
// happening: each turn one node's client writes a need, asks for a kind no domain answers, or takes
// back a need it wrote; a client applies a module a while after its needs changed (one time in five
// only after minutes) and takes an unanswered need back after a few minutes. A turn is planned as
// data (`turn`, testable without NATS), then played on the buckets (`playMoves`).

import type { KV, NatsConnection } from 'nats'
import { BUCKETS, keyOf } from '../src/domain/wire/key-shapes.js'

/** A put of `value`, or a delete when `value` is absent. */
export interface Move {
  bucket: 'needs' | 'applied'
  key: string
  value?: unknown
}

/** The needs a client writes, of kinds the registry answers: a small set, so keys are written again rather than piling up. */
export const ANSWERED_NEEDS: ReadonlyArray<{ kind: string, name: string }> = [
  { kind: 'config', name: 'settings' },
  { kind: 'secret', name: 'api-key' },
  { kind: 'port', name: 'metrics' },
  { kind: 'dir', name: 'data' }
]

/** Kinds no domain answers: a typo and a provider the registry never names. */
export const UNANSWERED_KINDS: readonly string[] = ['certficate', 'vpn-peer']

const SECOND = 1000
const MINUTE = 60 * SECOND

export interface PlayerOptions {
  nodes: readonly string[]
  modules: readonly string[]
  /** A number in [0, 1), Math.random's contract; a test scripts it. */
  random?: () => number
}

export class ProvisionerPlayer {
  private readonly random: () => number
  /** `node.module` → when its client applies it. */
  private readonly applyAt = new Map<string, number>()
  /** Needs keys of answered kinds this player wrote and has not deleted. */
  private readonly written = new Set<string>()
  /** Needs keys of unanswered kinds → when their client takes them back (two at most stand). */
  private readonly takeBackAt = new Map<string, number>()

  constructor (private readonly opts: PlayerOptions) {
    this.random = opts.random ?? Math.random
  }

  /** The moves of the turn at `now` (ms): the applies and take-backs that fell due, then one client's action. */
  turn (now: number): Move[] {
    const moves: Move[] = []
    for (const [key, at] of this.takeBackAt) {
      if (at > now) continue
      this.takeBackAt.delete(key)
      moves.push({ bucket: 'needs', key })
    }
    for (const [module, at] of this.applyAt) {
      if (at > now) continue
      this.applyAt.delete(module)
      moves.push({ bucket: 'applied', key: module, value: { plan: `${module.split('.')[1] as string}@demo`, appliedAt: new Date(now).toISOString(), ok: true } })
    }
    const node = this.pick(this.opts.nodes)
    const module = this.pick(this.opts.modules)
    const action = this.random()
    const unanswered = keyOf('needs', { node, module, kind: this.pick(UNANSWERED_KINDS), name: 'main' })
    if (action < 0.15 && this.takeBackAt.size < 2 && !this.takeBackAt.has(unanswered)) {
      const key = unanswered
      this.takeBackAt.set(key, now + this.between(2 * MINUTE, 4 * MINUTE))
      moves.push({ bucket: 'needs', key, value: { asked: new Date(now).toISOString() } })
    } else if (action < 0.4 && this.written.size > 0) {
      const key = this.pick([...this.written])
      this.written.delete(key)
      moves.push({ bucket: 'needs', key })
    } else {
      const need = this.pick(ANSWERED_NEEDS)
      const key = keyOf('needs', { node, module, ...need })
      this.written.add(key)
      const modKey = keyOf('applied', { node, module })
      if (!this.applyAt.has(modKey)) this.applyAt.set(modKey, now + (this.random() < 0.2 ? this.between(2 * MINUTE, 5 * MINUTE) : this.between(10 * SECOND, 40 * SECOND)))
      moves.push({ bucket: 'needs', key, value: { asked: new Date(now).toISOString() } })
    }
    return moves
  }

  private pick<T> (from: readonly T[]): T {
    return from[Math.floor(this.random() * from.length)] as T
  }

  private between (low: number, high: number): number {
    return low + Math.floor(this.random() * (high - low))
  }
}

/** Plays moves on the needs and applied buckets, in order. */
export async function playMoves (kv: Record<Move['bucket'], KV>, moves: readonly Move[]): Promise<void> {
  for (const move of moves) {
    if (move.value === undefined) await kv[move.bucket].delete(move.key)
    else await kv[move.bucket].put(move.key, JSON.stringify(move.value))
  }
}

export interface Playing {
  /** Ends the play once the turn in flight is written. */
  stop (): Promise<void>
}

/** Plays a turn every `everyMs` on the buckets of `nc` (which must exist); a turn that fails is said by `onError` and the play goes on. */
export async function playProvisioners (nc: NatsConnection, opts: PlayerOptions & { everyMs: number, onError: (err: Error) => void }): Promise<Playing> {
  const js = nc.jetstream()
  const kv = {
    needs: await js.views.kv(BUCKETS.needs, { bindOnly: true }),
    applied: await js.views.kv(BUCKETS.applied, { bindOnly: true })
  }
  const player = new ProvisionerPlayer(opts)
  // A turn still writing when the next is due (a slow NATS) makes the next one skip.
  let inFlight: Promise<void> | undefined
  const timer = setInterval(() => {
    inFlight ??= playMoves(kv, player.turn(Date.now())).catch(opts.onError).finally(() => { inFlight = undefined })
  }, opts.everyMs)
  return {
    async stop () {
      clearInterval(timer)
      await inFlight
    }
  }
}
