// A stream's follower: follows one request for one open stream through a source (a bucket's
// entries here, the rows of the mesh at a glance in row-source.ts), and says it through an Sse. It
// holds no queue of its own: it remembers the last cursor it sent and, whenever the source
// signals, reads the changes after it, so a burst of writes costs it one read, and a reader that
// does not keep up is disconnected rather than buffered for (it resumes by its last id).

import type { What } from '../domain/wire/key-shapes.js'
import { BUCKETS } from '../domain/wire/key-shapes.js'
import { formatCursor, parseCursor } from '../domain/wire/cursor.js'
import { ProvisionerError } from '../domain/wire/errors.js'
import type { Provisioning } from '../domain/answers/provisioning.js'
import type { Following } from '../domain/answers/waiters.js'
import type { BucketRequest } from '../domain/wire/request.js'
import type { ViewStatus } from '../domain/wire/schemas.js'
import type { EventType, Sse } from './sse.js'

/** What a stream asks of the views beside Provisioning; the gateway fills it from the views. */
export interface FollowedViews {
  /** The view's status now: its state (`live` once read whole), staleness, revision and bucket. */
  status (what: What): ViewStatus
  /** The contents the view answers from (`Contents.state`: what they hold now); throws its refusal (NOT_READY, BUCKET_MISSING) while it has none. */
  held (what: What): { readonly state: object }
  /** Whether the service is connected to NATS now. */
  connected (): boolean
}

export interface FollowerDeps {
  provisioning: Provisioning
  views: FollowedViews
}

/** Entries per snapshot page and changes per read: the stream waits for its reader between them. */
const PAGE = 500

/** A change as a stream sends it. */
export interface StreamChange { readonly type: EventType, readonly json: string }

/** Changes as read once for every stream asking them: with the cursor they end at, each change's event id, and where the next read starts. */
export interface SharedBatch {
  readonly changes: readonly StreamChange[]
  readonly ids: readonly string[]
  /** The cursor of the last change given (or the one asked, when there are none): `synced` names it. */
  readonly cursor: string
  readonly more: boolean
  /** Where the next read starts: past the changes the filter left out, once they were all looked at. */
  readonly next: string
}

/**
 * What a stream follows: a request over the views, read by cursors that are its own (opaque to
 * the follower). Every read refuses as the request's answers do (NOT_READY, BUCKET_MISSING), and a
 * cursor it cannot serve is CURSOR_EXPIRED.
 */
export interface StreamSource {
  /** The request as text: streams asking the same share what they read. */
  readonly requestKey: string
  /**
   * Calls `wake` on every change of what it reads after the cursor the stream last moved to
   * (`position` at first; every change while that is undefined), and every change of state, until it stops.
   */
  listen (wake: () => void, position: string | undefined): Following
  /** Live, or why not (said by `stale`). */
  state (): State
  /** Whether its snapshot and changes can be read now. */
  readable (): boolean
  /** What `live` says. */
  readonly liveReason: string
  /** Why a snapshot starts again when a bucket went away while it was paged. */
  readonly goneReason: string
  /** The cursor a stream resumes from, read from its Last-Event-ID; throws (its message then says why a snapshot follows) when it is none. */
  resumeFrom (id: string): string
  /** Waits a moment for this instance to reach a cursor another instance gave. */
  catchUp (since: string): Promise<void>
  /** One page of what the request holds now; `cursor` names the state read, `next` the page after. */
  snapshot (after: string | undefined, limit: number): { entries: readonly string[], outOfShape: readonly string[], next?: string | undefined, cursor: string }
  /** Whether two cursors name the same generation of what is read (else a snapshot paged across them is started again). */
  sameGeneration (a: string, b: string): boolean
  /** The state changes are read from, equal (===) to another only while it is the same: reads in the same state are shared. */
  readState (): unknown
  /** The changes after `since`, at most `limit`. */
  changes (since: string, limit: number): SharedBatch
  /** How many entries (rows) the request keeps now, and whether they are stale: what `synced` says. */
  count (): { total: number, stale: boolean }
}

/**
 * The last changes read, shared by the streams of one gateway: a thousand streams of one filter
 * ask the same changes after the same cursor, so they are read, and their ids written, once.
 */
export class SharedReads {
  /** The last changes read, by request and cursor, and the state of the view they were read from. */
  private read: { request: string, since: string, state: unknown, batch: SharedBatch } | undefined

  /** The changes after `since` of `request` (its requestKey) in view state `state` (StreamSource.readState): read by `read` unless read already. */
  changes (request: string, since: string, state: unknown, read: () => SharedBatch): SharedBatch {
    let last = this.read
    if (last?.request !== request || last.since !== since || last.state !== state) this.read = last = { request, since, state, batch: read() }
    return last.batch
  }
}

export type State = { live: true } | { live: false, reason: string }

/** A view's state as a stream says it: live, or why not. */
export function viewState (views: FollowedViews, what: What): State {
  try {
    views.held(what)
  } catch (err) {
    return { live: false, reason: (err as Error).message }
  }
  const view = views.status(what)
  if (!view.stale) return { live: true }
  if (!views.connected()) return { live: false, reason: 'the service is cut off from NATS; the stream shows what it last knew and goes on when NATS is back' }
  return { live: false, reason: `bucket ${view.bucket} is being read again (after a reconnect or a re-creation); the stream shows what it last knew until it is caught up` }
}

/** A bucket's entries narrowed by a request: the change feed of one bucket. */
class BucketSource implements StreamSource {
  readonly requestKey: string
  readonly liveReason: string
  readonly goneReason: string

  constructor (private readonly deps: FollowerDeps, private readonly bucketRequest: BucketRequest) {
    this.requestKey = JSON.stringify([bucketRequest.what, bucketRequest.filter])
    this.liveReason = `bucket ${BUCKETS[bucketRequest.what]} is followed live`
    this.goneReason = `bucket ${BUCKETS[bucketRequest.what]} went away during the snapshot`
  }

  listen (wake: () => void, position: string | undefined): Following {
    // Only the changes the request keeps wake it (a write to another node costs the stream nothing).
    return this.deps.provisioning.follow(this.bucketRequest, position, wake)
  }

  state (): State {
    return viewState(this.deps.views, this.bucketRequest.what)
  }

  readable (): boolean {
    return this.deps.views.status(this.bucketRequest.what).state === 'live'
  }

  resumeFrom (id: string): string {
    parseCursor(id, 'Last-Event-ID')
    return id
  }

  async catchUp (since: string): Promise<void> {
    await this.deps.provisioning.catchUp({ ...this.bucketRequest, since: parseCursor(since) })
  }

  snapshot (after: string | undefined, limit: number): ReturnType<StreamSource['snapshot']> {
    return this.deps.provisioning.snapshot(this.bucketRequest, after, limit)
  }

  sameGeneration (a: string, b: string): boolean {
    return parseCursor(a).generation === parseCursor(b).generation
  }

  readState (): object {
    return this.deps.views.held(this.bucketRequest.what).state
  }

  changes (since: string, limit: number): SharedBatch {
    const { provisioning, views } = this.deps
    const view = views.status(this.bucketRequest.what)
    const read = provisioning.changes({ ...this.bucketRequest, since: parseCursor(since) }, limit)
    const end = parseCursor(read.cursor)
    // Every change the view holds has been looked at: the next look starts after them, so that
    // writes the filter leaves out are not read again and again by a narrow stream.
    const next = !read.more && view.state === 'live' && !view.stale && view.revision > end.revision ? formatCursor(view.revision, end.generation) : read.cursor
    return { changes: read.changes, ids: read.changes.map((c) => formatCursor(c.revision, end.generation)), cursor: read.cursor, more: read.more, next }
  }

  count (): { total: number, stale: boolean } {
    return this.deps.provisioning.count(this.bucketRequest)
  }
}

/** What `synced` says: the source's count when the stream caught up. */
type Counted = ReturnType<StreamSource['count']>

/** Follows a source on one stream until the stream closes. */
export class StreamFollower {
  /** The cursor of the last change sent; undefined while a snapshot is due. Moved by `moveTo` once the stream follows. */
  private position: string | undefined
  private following: Following | undefined
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

  constructor (private readonly source: StreamSource, private readonly reads: SharedReads, private readonly sse: Sse, resume: string | undefined) {
    if (resume === undefined) return
    try {
      this.position = source.resumeFrom(resume)
      this.syncing = true
    } catch (err) {
      this.resetReason = (err as Error).message
    }
  }

  async run (): Promise<void> {
    const following = this.following = this.source.listen(() => this.wake(), this.position)
    void this.sse.closed.then(() => this.wake())
    try {
      if (this.position !== undefined) await this.source.catchUp(this.position)
      while (this.sse.open) {
        this.dirty = false
        const stepping = this.step()
        if (stepping !== undefined) await stepping
        if (!this.dirty && this.sse.open) {
          // Woken, the loop goes on in an immediate: it lets a burst of changes land before they
          // are read, so that it costs one read; and each stream's step is a callback of its own,
          // whose write Node sends as the callback ends: woken together, a thousand streams'
          // writes would all wait for the last step.
          await new Promise<void>((resolve) => { this.waiting = () => setImmediate(resolve) })
        }
      }
    } finally {
      following.stop()
    }
  }

  /** Moves the stream's cursor, and with it the changes that wake it. */
  private moveTo (cursor: string | undefined): void {
    this.position = cursor
    this.following?.moved(cursor)
  }

  /** Marks that something changed, and resumes the loop when it waits. */
  private wake (): void {
    this.dirty = true
    this.refused = false
    const waiting = this.waiting
    this.waiting = undefined
    waiting?.()
  }

  /**
   * One look: says a change of state, then sends a snapshot or the changes after the last one sent.
   * A promise only while it waits (a snapshot, a reader behind): a put's changes reach a thousand
   * streams, and an async step and read a stream were a third of the garbage of each one's event
   * (bench/RESULTS.md).
   */
  private step (): Promise<void> | undefined {
    const { source } = this
    const state = source.state()
    if (state.live !== this.announced) {
      if (state.live && this.announced === false) this.sse.send('live', JSON.stringify({ reason: source.liveReason }))
      if (!state.live) this.sse.send('stale', JSON.stringify({ reason: state.reason }))
      this.announced = state.live
    }
    if (!source.readable()) return undefined
    try {
      const waiting = this.position === undefined ? this.snapshot() : this.changes(this.position)
      return waiting?.catch((err: unknown) => { this.refusedBy(err) })
    } catch (err) {
      this.refusedBy(err)
      return undefined
    }
  }

  /**
   * A read the source refused: the cursor cannot be served (another generation, or one this
   * instance does not reach), or the bucket went while a snapshot was paged. The stream starts
   * again from a snapshot once it can be read, at once the first time; a second refusal with no
   * signal between waits for the next one. Anything else is thrown on.
   */
  private refusedBy (err: unknown): void {
    if (!(err instanceof ProvisionerError) || !['CURSOR_EXPIRED', 'NOT_READY', 'BUCKET_MISSING'].includes(err.code)) throw err
    this.resetReason = err.code === 'BUCKET_MISSING' ? this.source.goneReason : err.message
    this.moveTo(undefined)
    this.syncing = false
    const retry = err.code === 'CURSOR_EXPIRED' || this.source.readable()
    if (retry && !this.refused) this.dirty = true
    this.refused = true
  }

  /**
   * Every matching entry, page by page, waiting for the reader between events. The changes after
   * the first page's cursor then complete it (steps of `changes`), so a bucket moving while the
   * pages are read leaves no gap; `synced` follows them.
   */
  private async snapshot (): Promise<void> {
    const { source } = this
    if (this.resetReason !== undefined) {
      // An empty id makes a browser forget the old one: a stream cut during the snapshot starts over.
      this.sse.send('reset', JSON.stringify({ reason: this.resetReason }), '')
      this.resetReason = undefined
    }
    const first = source.snapshot(undefined, PAGE)
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
      page = source.snapshot(page.next, PAGE)
      if (!source.sameGeneration(page.cursor, first.cursor)) {
        throw new ProvisionerError('CURSOR_EXPIRED', `${source.requestKey} was read from a bucket created again during the snapshot`)
      }
    }
    this.moveTo(first.cursor)
    this.syncing = true
    this.dirty = true
  }

  /** The changes after `since`, a page at a time, each with its cursor as id; `synced` once caught up. A promise only while the reader is behind. */
  private changes (since: string): Promise<void> | undefined {
    const { source } = this
    const batch = this.reads.changes(source.requestKey, since, source.readState(), () => source.changes(since, PAGE))
    this.refused = false
    // Read in the same turn as the changes, so that `total` is of the state `cursor` names.
    const synced = !batch.more && this.syncing ? source.count() : undefined
    return this.send(batch, 0, synced)
  }

  /** Sends the changes of `batch` from `from` on, then `synced` when it is due; waits only where the socket asks it to. */
  private send (batch: SharedBatch, from: number, synced: Counted | undefined): Promise<void> | undefined {
    for (let i = from; i < batch.changes.length; i++) {
      const c = batch.changes[i] as StreamChange
      this.sse.send(c.type, c.json, batch.ids[i])
      this.moveTo(batch.ids[i])
      // No turn of the loop while the socket takes what is written: a put reaches a thousand streams.
      const taken = this.sse.taken()
      if (taken === false) return undefined
      if (taken !== true) return this.sendWhenTaken(taken, batch, i + 1, synced)
    }
    this.moveTo(batch.next)
    if (batch.more) this.dirty = true
    if (synced === undefined) return undefined
    this.syncing = false
    this.sse.send('synced', JSON.stringify({ cursor: batch.cursor, total: synced.total, stale: synced.stale }), batch.cursor)
    const taken = this.sse.taken()
    return typeof taken === 'boolean' ? undefined : taken.then(() => {})
  }

  private async sendWhenTaken (taken: Promise<boolean>, batch: SharedBatch, from: number, synced: Counted | undefined): Promise<void> {
    if (await taken) await this.send(batch, from, synced)
  }
}

/** Follows a bucket request on one stream until the stream closes. */
export class StreamOfRequest extends StreamFollower {
  constructor (deps: FollowerDeps, reads: SharedReads, sse: Sse, bucketRequest: BucketRequest, resume: string | undefined) {
    super(new BucketSource(deps, bucketRequest), reads, sse, resume)
  }
}
