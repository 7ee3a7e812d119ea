// The registry writer: at start and every period, makes the registry bucket hold exactly the
// compiled answers, writing only kinds whose bytes differ (compare-and-set on the revision read)
// and deleting kinds no domain answers. The only writer in the service, and it writes only this.

import type { KV } from 'nats'
import { backoff } from '../backoff.js'
import { isWrongLastSequence } from '../follow/nats-fence.js'
import type { CompiledKind } from './registry.js'
import type { Logger } from '../logger.js'
import type { RegistryRun } from '../wire/schemas.js'

export interface RegistryWriterOptions {
  /** Opens (and, where allowed, creates) the registry bucket; called until it succeeds. */
  open: () => Promise<KV>
  compiled: ReadonlyMap<string, CompiledKind>
  intervalMs: number
  /** The first retry after a failed run (ms); it doubles up to the interval, at most five minutes. */
  retryMs?: number
  log: Logger
  onRun?: (run: RegistryRun) => void
}

type Outcome = 'wrote' | 'left' | 'deleted'

function sameBytes (a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0
}

/** Makes one key hold `want` (or nothing, for null), re-reading after a lost compare-and-set. */
async function converge (kv: KV, key: string, want: Uint8Array | null): Promise<Outcome> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await kv.get(key)
    const present = current !== null && current.operation === 'PUT'
    try {
      if (want === null) {
        if (!present) return 'left'
        await kv.delete(key, { previousSeq: current.revision })
        return 'deleted'
      }
      if (present && sameBytes(current.value, want)) return 'left'
      if (present) await kv.update(key, want, current.revision)
      else await kv.create(key, want)
      return 'wrote'
    } catch (err) {
      if (!isWrongLastSequence(err)) throw err
    }
  }
  throw new Error(`registry key ${key} changed under five compare-and-sets in a row; another writer is fighting this one`)
}

export class RegistryWriter {
  private readonly opts: RegistryWriterOptions
  private timer: NodeJS.Timeout | undefined
  private running: Promise<RegistryRun> | undefined
  private failures = 0
  private stopped = false
  private connected = true
  last: RegistryRun | undefined

  constructor (opts: RegistryWriterOptions) {
    this.opts = opts
  }

  async stop (): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.running
  }

  /**
   * Told by the connection's status. While NATS is away a run fails at once, rather than after
   * each request's timeout; once it is back, a run that failed is tried again at once, rather than
   * when its backoff ends.
   */
  setConnected (connected: boolean): void {
    this.connected = connected
    if (!connected) return
    const failed = (run: RegistryRun | undefined): void => { if (run !== undefined && !run.ok) this.schedule(0) }
    if (this.running === undefined) failed(this.last)
    else void this.running.then(failed)
  }

  private schedule (ms: number): void {
    if (this.stopped) return
    clearTimeout(this.timer)
    this.timer = setTimeout(() => { void this.run() }, ms)
  }

  /** Runs once now (or joins the run under way) and schedules the next. */
  async run (): Promise<RegistryRun> {
    this.running ??= this.runOnce().finally(() => { this.running = undefined })
    return await this.running
  }

  private async runOnce (): Promise<RegistryRun> {
    const started = Date.now()
    const run: RegistryRun = { at: new Date(started).toISOString(), ok: false, durationMs: 0, wrote: [], left: [], deleted: [] }
    try {
      if (!this.connected) throw new Error('NATS is not connected; the run is tried again as soon as it reconnects')
      // Opened anew each run (one stream info an hour): a bucket deleted meanwhile is created again.
      const kv = await this.opts.open()
      const stored: string[] = []
      for await (const key of await kv.keys()) stored.push(key)
      for (const [kind, { bytes }] of this.opts.compiled) run[await converge(kv, kind, bytes)].push(kind)
      for (const key of stored) {
        if (this.opts.compiled.has(key)) continue
        if (await converge(kv, key, null) === 'deleted') run.deleted.push(key)
      }
      run.ok = true
      this.failures = 0
    } catch (err) {
      run.error = (err as Error).message
      this.failures++
    }
    run.durationMs = Date.now() - started
    const retry = backoff(this.opts.retryMs ?? 5000, Math.min(this.opts.intervalMs, 300_000), this.failures)
    const wait = run.ok ? this.opts.intervalMs : retry
    run.nextAt = new Date(Date.now() + wait).toISOString()
    this.last = run
    if (run.ok) this.opts.log.info({ wrote: run.wrote, left: run.left.length, deleted: run.deleted, durationMs: run.durationMs }, 'registry written where it differed')
    else this.opts.log.warn({ error: run.error, retryInMs: wait }, 'registry run failed; trying again sooner than the next period')
    this.opts.onRun?.(run)
    this.schedule(wait)
    return run
  }
}
