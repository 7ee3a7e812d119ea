// A stream's follower: follows one question for one open stream, asking the domain only (the
// Provisioning interface and the small FollowedViews port), and says it through an Sse. It holds no
// queue of its own: it remembers the last cursor it sent and, whenever the view signals, reads the
// changes after it, so a burst of writes costs it one read, and a reader that does not keep up is
// disconnected rather than buffered for (it resumes by its last id).

import type { What } from '../domain/wire/key-shapes.js'
import { BUCKETS } from '../domain/wire/key-shapes.js'
import { formatCursor, parseCursor, type Cursor } from '../domain/wire/cursor.js'
import { ProvisionerError } from '../domain/wire/errors.js'
import type { Provisioning } from '../domain/answers/provisioning.js'
import type { Query } from '../domain/wire/request.js'
import type { ViewStatus } from '../domain/wire/schemas.js'
import type { Sse } from './sse.js'

/** What a stream asks of the views beside Provisioning; the gateway fills it from the views. */
export interface FollowedViews {
  /** The view's status now: its state (`live` once read whole), staleness, revision and bucket. */
  status (what: What): ViewStatus
  /** The revision and generation the view answers from; throws its refusal (NOT_READY, BUCKET_MISSING) while it has none. */
  held (what: What): { readonly revision: number, readonly generation: string }
  /** Whether the service is connected to NATS now. */
  connected (): boolean
}

export interface FollowerDeps {
  provisioning: Provisioning
  views: FollowedViews
}

/** Entries per snapshot page and changes per read: the stream waits for its reader between them. */
const PAGE = 500

type Changes = ReturnType<Provisioning['changes']>

/** Changes as read once for every stream asking them: with the cursor they end at and each change's event id. */
export interface SharedBatch {
  readonly changes: Changes
  readonly next: Cursor
  readonly ids: readonly string[]
}

/**
 * The last changes read, shared by the streams of one gateway: a thousand streams of one filter
 * ask the same changes after the same cursor, so they are read, and their ids written, once.
 */
export class SharedReads {
  /** The last changes read, by question and cursor, and the state of the view they were read from. */
  private read: { key: string, state: string, batch: SharedBatch } | undefined

  /** The changes `key` (a question and a cursor) names in view state `state`: read by `read` unless read already. */
  changes (key: string, state: string, read: () => Changes): SharedBatch {
    if (this.read?.key !== key || this.read.state !== state) {
      const changes = read()
      const next = parseCursor(changes.cursor)
      this.read = { key, state, batch: { changes, next, ids: changes.changes.map((c) => formatCursor(c.revision, next.generation)) } }
    }
    return this.read.batch
  }
}

type State = { live: true } | { live: false, reason: string }

/** Follows `query` on one stream until the stream closes. */
export class StreamOfQuestion {
  /** The cursor of the last change sent; undefined while a snapshot is due. */
  private position: Cursor | undefined
  /** Why the next snapshot is preceded by `reset`. */
  private resetReason: string | undefined
  /** Changes are being read up to now, after a snapshot or a resume: `synced` follows them. */
  private syncing = false
  /** The state last announced: undefined before the first look, which says only `stale`. */
  private announced: boolean | undefined
  private dirty = true
  /** A refusal came and no signal since: another is not retried at once, so that one that persists cannot spin the loop. */
  private refused = false
  /** Resolves the loop's wait for a change, while it waits. */
  private waiting: (() => void) | undefined
  /** The question followed, as text: streams asking the same share what they read. */
  private readonly asked: string

  constructor (private readonly deps: FollowerDeps, private readonly reads: SharedReads, private readonly sse: Sse, private readonly query: Query, resume: string | undefined) {
    this.asked = `${JSON.stringify([query.what, query.filter])} `
    if (resume === undefined) return
    try {
      this.position = parseCursor(resume, 'Last-Event-ID')
      this.syncing = true
    } catch (err) {
      this.resetReason = (err as Error).message
    }
  }

  async run (): Promise<void> {
    const { provisioning } = this.deps
    const stop = provisioning.listen(this.query.what, () => this.wake())
    void this.sse.closed.then(() => this.wake())
    try {
      if (this.position !== undefined) await provisioning.catchUp({ ...this.query, since: this.position })
      while (this.sse.open) {
        this.dirty = false
        await this.step()
        if (!this.dirty && this.sse.open) {
          await new Promise<void>((resolve) => { this.waiting = resolve })
          // Lets a burst of changes land before they are read, so that it costs one read.
          await new Promise((resolve) => setImmediate(resolve))
        }
      }
    } finally {
      stop()
    }
  }

  /** Marks that something changed, and resumes the loop when it waits. */
  private wake (): void {
    this.dirty = true
    this.refused = false
    const waiting = this.waiting
    this.waiting = undefined
    waiting?.()
  }

  private state (): State {
    const { views } = this.deps
    try {
      views.held(this.query.what)
    } catch (err) {
      return { live: false, reason: (err as Error).message }
    }
    const view = views.status(this.query.what)
    if (!view.stale) return { live: true }
    if (!views.connected()) return { live: false, reason: 'the service is cut off from NATS; the stream shows what it last knew and goes on when NATS is back' }
    return { live: false, reason: `bucket ${view.bucket} is being read again (after a reconnect or a re-creation); the stream shows what it last knew until it is caught up` }
  }

  /** One look: says a change of state, then sends a snapshot or the changes after the last one sent. */
  private async step (): Promise<void> {
    const state = this.state()
    if (state.live !== this.announced) {
      if (state.live && this.announced === false) this.sse.send('live', JSON.stringify({ reason: `bucket ${BUCKETS[this.query.what]} is followed live` }))
      if (!state.live) this.sse.send('stale', JSON.stringify({ reason: state.reason }))
      this.announced = state.live
    }
    if (this.deps.views.status(this.query.what).state !== 'live') return
    try {
      if (this.position === undefined) await this.snapshot()
      else await this.changes(this.position)
    } catch (err) {
      if (!(err instanceof ProvisionerError) || !['CURSOR_EXPIRED', 'NOT_READY', 'BUCKET_MISSING'].includes(err.code)) throw err
      // The cursor cannot be served (another generation, or one this instance does not reach), or
      // the bucket went while a snapshot was paged: start again from a snapshot once it can be read,
      // at once the first time; a second refusal with no signal between waits for the next one.
      this.resetReason = err.code === 'BUCKET_MISSING' ? `bucket ${BUCKETS[this.query.what]} went away during the snapshot` : err.message
      this.position = undefined
      this.syncing = false
      const retry = err.code === 'CURSOR_EXPIRED' || this.deps.views.status(this.query.what).state === 'live'
      if (retry && !this.refused) this.dirty = true
      this.refused = true
    }
  }

  /**
   * Every matching entry, page by page, waiting for the reader between events. The changes after
   * the first page's cursor then complete it (steps of `changes`), so a bucket moving while the
   * pages are read leaves no gap; `synced` follows them.
   */
  private async snapshot (): Promise<void> {
    const { provisioning } = this.deps
    if (this.resetReason !== undefined) {
      // An empty id makes a browser forget the old one: a stream cut during the snapshot starts over.
      this.sse.send('reset', JSON.stringify({ reason: this.resetReason }), '')
      this.resetReason = undefined
    }
    const first = provisioning.snapshot(this.query, undefined, PAGE)
    const start = parseCursor(first.cursor)
    let page = first
    for (;;) {
      for (const json of page.entries) {
        this.sse.send('put', json)
        if (!(await this.sse.taken())) return
      }
      if (page === first) {
        for (const json of first.outOfShape) {
          this.sse.send('outOfShape', json)
          if (!(await this.sse.taken())) return
        }
      }
      if (page.next === undefined) break
      page = provisioning.snapshot(this.query, page.next, PAGE)
      if (parseCursor(page.cursor).generation !== start.generation) {
        throw new ProvisionerError('CURSOR_EXPIRED', `bucket ${BUCKETS[this.query.what]} was created again during the snapshot`)
      }
    }
    this.position = start
    this.syncing = true
    this.dirty = true
  }

  /** The changes after `since`, a page at a time, each with its cursor as id; `synced` once caught up. */
  private async changes (since: Cursor): Promise<void> {
    const { provisioning } = this.deps
    const view = this.deps.views.status(this.query.what)
    const held = this.deps.views.held(this.query.what)
    const shared = this.reads.changes(`${this.asked}${formatCursor(since.revision, since.generation)}`, formatCursor(held.revision, held.generation), () => provisioning.changes({ ...this.query, since }, PAGE))
    const batch = shared.changes
    let next = shared.next
    this.refused = false
    // Read in the same turn as the changes, so that `total` is of the state `cursor` names.
    const synced = !batch.more && this.syncing ? provisioning.count(this.query) : undefined
    // Every change the view holds has been looked at: the next look starts after them, so that
    // writes the filter leaves out are not read again and again by a narrow stream.
    if (!batch.more && view.state === 'live' && !view.stale && view.revision > next.revision) next = { revision: view.revision, generation: next.generation }
    for (let i = 0; i < batch.changes.length; i++) {
      const c = batch.changes[i] as Changes['changes'][number]
      this.sse.send(c.type, c.json, shared.ids[i])
      this.position = { revision: c.revision, generation: next.generation }
      // No turn of the loop while the socket takes what is written: a put reaches a thousand streams.
      const taken = this.sse.taken()
      if (taken !== true && !(await taken)) return
    }
    this.position = next
    if (synced !== undefined) {
      this.syncing = false
      this.sse.send('synced', JSON.stringify({ cursor: batch.cursor, total: synced.total, stale: synced.stale }), batch.cursor)
      await this.sse.taken()
    }
    if (batch.more) this.dirty = true
  }
}
