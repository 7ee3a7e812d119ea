// One function per request: the answer document of docs/verb.md, built from a view's ready JSON,
// narrowed, paged and cut to fit, or (with `since`) the changes after a cursor
// (docs/following-changes.md). Both transports answer with exactly these bytes; the event stream
// reads the same changes one by one.

import { Answer, answerCache, type AskOptions } from './answer.js'
import { facetsJson } from './facets.js'
import { createOverviews, type Overviews } from './overview.js'
import { heldUntil } from './held.js'
import { SharedKeeps, waitersByBucket, type Following, type Waiter, type Waiters } from './waiters.js'
import { BUCKETS, FIELDS, tokenOf, type What } from '../wire/key-shapes.js'
import { compareGenerations, formatCursor, streamRevision, type Cursor } from '../wire/cursor.js'
import { ProvisionerError } from '../wire/errors.js'
import type { Filter, BucketRequest } from '../wire/request.js'
import { listDocument, outOfShapeArray, sinceDocument, tooLarge, type Cut, type DocumentHead } from './documents.js'
import type { Contents, RevisionMemo } from '../store/contents.js'
import { keepsKey, narrowing, Selection, type Change, type Narrowing } from './selection.js'
import type { AnsweredViews } from './port.js'
import { defined } from '../defined.js'
import { ByteWriter } from '../store/byte-writer.js'
import type { StoredEntry } from '../store/entry.js'

/** 2000-01-01 in nanoseconds: a generation before it is no time a bucket was created. */
const EARLIEST_GENERATION = '946684800000000000'

/**
 * The refusal of a cursor of an older generation than the bucket's: the list is to be read again.
 * A generation that is no creation time at all (`since=1-1`, mistyped) is not said to be a bucket
 * deleted and created again.
 */
export function cursorExpired (what: What, since?: Cursor): ProvisionerError {
  if (since !== undefined && compareGenerations(since.generation, EARLIEST_GENERATION) < 0) {
    return new ProvisionerError('CURSOR_EXPIRED', `since "${formatCursor(since.revision, since.generation)}" is not a cursor this service gave: its generation, ${since.generation}, is no time bucket ${BUCKETS[what]} was created; ask the list again without since and follow the cursor its answer gives`, 'since')
  }
  return new ProvisionerError('CURSOR_EXPIRED', `since names another generation of bucket ${BUCKETS[what]} (it was deleted and created again since); ask the list again without since and follow its cursor`, 'since')
}

export interface Snapshot {
  entries: string[]
  outOfShape: string[]
  /** Every entry the filter keeps now. */
  total: number
  next?: string
  cursor: string
  stale: boolean
}

/** Room kept for the answer's head and tail around the entries. */
const FRAME = 512
/**
 * The share of an answer's room that out-of-shape keys may take: entries, which a client pages
 * through with `after`, keep the rest (out-of-shape keys are not paged).
 */
const OUT_OF_SHAPE_SHARE = 1 / 4

/**
 * A request kept to be asked again and again (a console polling one URL, a module asking at each start):
 * its tag is kept while its bucket has not moved, and its key in the answer cache for good, so
 * that asking costs a few comparisons and one lookup instead of narrowing and keying each time.
 * It keeps no answer: answers are held by the answer cache alone, which counts their bytes.
 */
export interface KeptRequest {
  readonly request: BucketRequest
  readonly opts: AskOptions
  /** As Provisioning.tag of the request. */
  tag (): string
  /** As Provisioning.ask of the request. */
  answer (): Answer
}

/**
 * What a KeptRequest holds beyond the text it was read from, for the faces' caches of requests: a
 * three-field list request with the gateway's ETag measured 1.8 KB of heap. The text counts twice
 * (the cache's key, and the values read from it).
 */
export function keptRequestBytes (text: string): number {
  return 2048 + 2 * text.length
}

export interface Provisioning {
  /** The requests across buckets: nodes and modules (docs/glance.md). */
  readonly overviews: Overviews
  ask (request: BucketRequest, opts?: AskOptions): Answer
  /** `request` kept to be asked again; it answers what `tag` and `ask` would. */
  keep (request: BucketRequest, opts?: AskOptions): KeptRequest
  /** One entry's JSON by key; NOT_FOUND when the bucket holds no such entry. */
  entry (what: What, key: string): { json: string, tag: string }
  /**
   * Names the state the answer to `request` is built from: while it is the same, the request gets
   * the same bytes, so a transport can validate a cached answer without building it again. It
   * moves only with a change the answer would show (docs/following-changes.md). Refuses like the requests do while
   * the bucket is missing or loading.
   */
  tag (request: BucketRequest): string
  /**
   * The changes after `request.since` that the filter keeps, latest per key, in revision order, at
   * most `limit`; `cursor` names the last one given (or the cursor asked, when there are none).
   */
  changes (request: BucketRequest & { since: Cursor }, limit: number): { changes: Change[], cursor: string, more: boolean }
  /**
   * One page of what `request` holds now, for an event stream's snapshot: the entries after `after`
   * in key order (at most `limit`; `next` when more follow) and, on the first page, the out-of-shape
   * keys the filter keeps. `cursor` names the state the page was read from: the changes after the
   * first page's cursor complete a snapshot taken over several pages while the bucket moves.
   */
  snapshot (request: BucketRequest, after: string | undefined, limit: number): Snapshot
  /** How many entries `request` keeps now, and whether the view is stale: what an event stream's `synced` says. */
  count (request: BucketRequest): { total: number, stale: boolean }
  /**
   * Waits a moment for this instance to reach the revision of `request.since` when another instance
   * gave the cursor and this one has not read as far yet; the request then refuses or answers.
   */
  catchUp (request: BucketRequest, ms?: number): Promise<void>
  /**
   * Resolves when a change that one of `requests` would show lands after its `since` (after now,
   * for one without), when the view's state changes (stale, live, another generation), when
   * `signal` aborts, or after `ms`. Only such a change looks at the request: a write elsewhere
   * costs it nothing.
   */
  changed (requests: readonly BucketRequest[], ms: number, signal?: AbortSignal): Promise<void>
  /**
   * Calls `wake` whenever a change `request` would show lands after the cursor the stream last
   * moved to (`position` at first; none: every change), and at every change of the view's state,
   * until it stops: an event stream's signal. A write elsewhere costs it nothing.
   */
  follow (request: BucketRequest, position: string | undefined, wake: () => void): Following
}

/** The refusal of an entry the bucket does not hold. */
export function noEntry (what: What, key: string): ProvisionerError {
  return new ProvisionerError('NOT_FOUND', `bucket ${BUCKETS[what]} holds no ${FIELDS[what].join('.')} entry "${key}"; ask the list (what=${what}) to see what it holds`)
}

export { narrowing, type Change, type Narrowing } from './selection.js'
export { Answer, type AskOptions } from './answer.js'

/** How long a request waits for this instance to reach a cursor another one gave. */
const CATCH_UP_MS = 2000

function tagOf (contents: Contents, revision: number, stale: boolean): string {
  return `${revision}-${stale ? 's' : 'c'}-${contents.generation}`
}

/** The waiters' index of a filter: the key tokens it asks at its first field, when it asks any. */
function indexOf (what: What, filter: Filter): Waiter['index'] {
  const fields = FIELDS[what]
  const position = fields.findIndex((f) => filter[f] !== undefined)
  if (position === -1) return undefined
  const field = fields[position] as string
  // Several values: indexed under each, so that a change of any of them looks at the waiter.
  return { position, tokens: (filter[field] as readonly string[]).map((v) => tokenOf(field, v)) }
}

/** What an answer is built from: the bucket, its contents read now, and whether they are stale. */
interface Head { what: What, contents: Contents, stale: boolean }

const documentHead = ({ what, contents, stale }: Head): DocumentHead => ({ what, stale, generation: contents.generation })

/**
 * Where list answers are written: one at a time, each copied out whole by listDocument. It keeps
 * the room of the largest list written, at most the answer size bound (the bus's max payload).
 */
const listed = new ByteWriter()
const COMMA = 0x2c

/** The entries after `after` the filter keeps, in key order, as many as `limit` and `budget` allow. */
function list (head: Head, n: Narrowing, revision: number, after: string | undefined, limit: number, budget: number): Buffer {
  const { what, contents } = head
  const selection = new Selection(contents, n)
  const outOfShape = outOfShapeArray(selection.outOfShape(), budget * OUT_OF_SHAPE_SHARE)
  const w = listed
  w.length = 0
  let taken = 0
  let used = outOfShape.bytes
  let omitted = 0
  let cut: Cut | undefined
  let last: StoredEntry | undefined
  const walked = selection.walk(after, (e) => {
    if (cut === undefined && taken >= limit) cut = 'limit'
    if (cut === undefined) {
      const tail = 66 + 6 * e.keyLength // bounds `,"next":…,"cut":{…}` for any key
      const mark = w.length
      if (taken > 0) w.byte(COMMA)
      const start = w.length
      e.writeTo(w)
      let bytes = w.length - start
      if (bytes + 1 + tail > budget - outOfShape.bytes) {
        w.length = start
        w.utf8(tooLarge(what, e, bytes, budget))
        bytes = w.length - start
      }
      if (used + bytes + 1 + tail <= budget) {
        taken++
        used += bytes + 1
        last = e
        return true
      }
      cut = 'payload'
      w.length = mark
    }
    omitted++
    // An exact set counts what is left without walking it.
    return !selection.exact
  })
  const total = selection.exact ? selection.count() : walked.before + walked.after
  if (selection.exact && cut !== undefined) omitted = total - walked.before - walked.after + 1
  const next = last?.key ?? (cut !== undefined ? after : undefined)
  return listDocument(documentHead(head), { revision, total, entries: w.view(), outOfShape, cut: cut === undefined ? undefined : { reason: cut, omitted }, next })
}

/** The changes after `from`: entries, deletions and out-of-shape keys cut together, in revision order. */
function since (head: Head, n: Narrowing, from: number, limit: number, budget: number): string {
  const { what, contents } = head
  const parts: Record<Change['type'], string[]> = { put: [], delete: [], outOfShape: [] }
  let used = 0
  let taken = 0
  let total = 0
  let last = from
  let cut: Cut | undefined
  for (const c of new Selection(contents, n).changesAfter(from)) {
    total++
    if (cut !== undefined) continue
    const json = c.entry !== undefined && c.entry.bytes + 1 > budget ? tooLarge(what, c.entry, c.entry.bytes, budget) : c.json
    const bytes = json === c.entry?.json ? c.entry.bytes : Buffer.byteLength(json)
    if (taken >= limit) cut = 'limit'
    else if (used + bytes + 1 > budget) cut = 'payload'
    else {
      parts[c.type].push(json)
      used += bytes + 1
      taken++
      last = c.revision
    }
  }
  return sinceDocument(documentHead(head), { last, total, ...parts, cut: cut === undefined ? undefined : { reason: cut, omitted: total - taken } })
}

/** The contents to answer from, refusing a cursor of another generation or one this instance has not reached. */
function read (views: AnsweredViews, request: BucketRequest): { contents: Contents, stale: boolean } {
  const view = views.byWhat[request.what]
  const contents = view.read()
  const since = request.since
  if (since !== undefined) {
    const order = compareGenerations(since.generation, contents.generation)
    if (order < 0) {
      throw cursorExpired(request.what, since)
    }
    if (order > 0) {
      throw new ProvisionerError('NOT_READY', `since names a generation of bucket ${BUCKETS[request.what]} newer than the one this instance reads (the bucket was created again, and this instance has not yet seen it); ask again shortly`)
    }
    if (since.revision < contents.expiredBefore) {
      throw new ProvisionerError('CURSOR_EXPIRED', `since is from before revision ${contents.expiredBefore} of bucket ${BUCKETS[request.what]}: this instance ${contents.expiredBecause}; ask the list again without since and follow its cursor`, 'since')
    }
    if (since.revision > contents.revision) {
      throw new ProvisionerError('NOT_READY', `this instance has read bucket ${BUCKETS[request.what]} up to revision ${contents.revision}, not yet ${since.revision}; ask again shortly`)
    }
  }
  return { contents, stale: view.stale }
}

/** Whether `since` names a point this instance has not reached: later in its generation, or of a newer one. */
function ahead (views: AnsweredViews, what: What, since: Cursor): boolean {
  let contents: Contents
  try {
    contents = views.byWhat[what].read()
  } catch {
    return true // loading: the cursor may be reached once it is read
  }
  const order = compareGenerations(since.generation, contents.generation)
  return order > 0 || (order === 0 && since.revision > contents.revision)
}

/** As Provisioning.snapshot. */
function snapshot (views: AnsweredViews, request: BucketRequest, after: string | undefined, limit: number): Snapshot {
  const { contents, stale } = read(views, request)
  const selection = new Selection(contents, narrowing(request.what, request.filter))
  const entries: string[] = []
  let next: string | undefined
  let last = after
  selection.walk(after, (e) => {
    if (entries.length === limit) {
      next = last
      return false
    }
    entries.push(e.json)
    last = e.key
    return true
  })
  const outOfShape = after === undefined ? [...selection.outOfShape()].map((o) => o.json) : []
  return { entries, outOfShape, total: selection.count(), ...defined({ next }), cursor: formatCursor(contents.revisionFor(selection.n.positions), contents.generation), stale }
}

/** As Provisioning.count. */
function count (views: AnsweredViews, request: BucketRequest): { total: number, stale: boolean } {
  const { contents, stale } = read(views, request)
  return { total: new Selection(contents, narrowing(request.what, request.filter)).count(), stale }
}

/** As Provisioning.catchUp. */
async function catchUp (views: AnsweredViews, request: BucketRequest, ms = CATCH_UP_MS): Promise<void> {
  const since = request.since
  if (since === undefined || !ahead(views, request.what, since)) return
  // Only a cursor ahead of this instance is waited for: one of an older generation is 410 at
  // once, and waiting would only make the client time out first.
  const view = views.byWhat[request.what]
  await new Promise<void>((resolve) => {
    const done = (): void => { clearTimeout(timer); stop(); resolve() }
    const timer = setTimeout(done, ms)
    const stop = view.listen(() => { if (!ahead(views, request.what, since)) done() })
  })
}

/** As Provisioning.changes. */
function changes (views: AnsweredViews, request: BucketRequest & { since: Cursor }, limit: number): { changes: Change[], cursor: string, more: boolean } {
  const { contents } = read(views, request)
  const changes: Change[] = []
  let last = request.since.revision
  let more = false
  for (const c of new Selection(contents, narrowing(request.what, request.filter)).changesAfter(last)) {
    if (changes.length >= limit) {
      more = true
      break
    }
    changes.push({ type: c.type, json: c.json, revision: c.revision })
    last = c.revision
  }
  return { changes, cursor: formatCursor(last, contents.generation), more }
}

/** As Provisioning.entry. */
function entry (views: AnsweredViews, what: What, key: string): { json: string, tag: string } {
  const view = views.byWhat[what]
  const contents = view.read()
  const e = contents.entries.get(key)
  if (!e) throw noEntry(what, key)
  return { json: e.json, tag: tagOf(contents, e.revision, view.stale) }
}

/**
 * Resolves on the first change one of `requests` would show, a change of its view's state, a
 * refusal, `signal` or `ms` (see Provisioning.changed); `waitersOf` holds each bucket's waiters.
 */
async function changed (views: AnsweredViews, waitersOf: (what: What) => Waiters, requests: readonly BucketRequest[], ms: number, signal?: AbortSignal): Promise<void> {
  await heldUntil(ms, signal, (wake, held) => {
    for (const request of requests) {
      try {
        const { contents } = read(views, request)
        const n = narrowing(request.what, request.filter)
        // The first change is enough: none is serialized beyond it.
        if (request.since !== undefined && new Selection(contents, n).changesAfter(request.since.revision).next().done !== true) return wake()
        held.push(waitersOf(request.what).add(waiterFor(request, (key) => keepsKey(n, key), request.since?.revision ?? contents.revision, wake)))
      } catch {
        return wake() // a refusal is news too: the request is asked again and answers it
      }
    }
  })
}

/** The waiter of `request`: woken by a change it would show (`keeps`) after revision `after`. */
function waiterFor (request: BucketRequest, keeps: Waiter['keeps'], after: number, wake: () => void): Waiter {
  return {
    after,
    index: indexOf(request.what, request.filter),
    keeps,
    wake
  }
}

/** As Provisioning.follow: a waiter held until the stream stops, its `after` moved with what it sent, its `keeps` its request's (`shared`). */
function follow (waitersOf: (what: What) => Waiters, shared: SharedKeeps, request: BucketRequest, position: string | undefined, wake: () => void): Following {
  const keeps = shared.take(JSON.stringify([request.what, request.filter]), () => {
    const n = narrowing(request.what, request.filter)
    return (key) => keepsKey(n, key)
  })
  const waiter = waiterFor(request, keeps.keeps, streamRevision(position), wake)
  const stop = waitersOf(request.what).add(waiter)
  return {
    moved: (cursor) => { waiter.after = streamRevision(cursor) },
    stop: () => {
      stop()
      keeps.release()
    }
  }
}

/** As Provisioning.tag; `memo` keeps what the request's revision was last read under. */
function tagNow (views: AnsweredViews, request: BucketRequest, memo?: RevisionMemo): string {
  const { contents, stale } = read(views, request)
  return tagOf(contents, contents.revisionFor(narrowing(request.what, request.filter).positions, memo), stale)
}

/** The answer cache's key of a request: what decides its bytes besides the state. */
function answerKey (request: BucketRequest, opts: AskOptions): string {
  return JSON.stringify([request.what, FIELDS[request.what].map((f) => request.filter[f]), request.after, request.since?.revision, request.by, request.limit, opts.defaultLimit, opts.maxBytes])
}

/** The answer document to `request` from the views as they are: the facets, the list, or the changes after its cursor. */
function answerJson (views: AnsweredViews, request: BucketRequest, opts: AskOptions, memo?: RevisionMemo): string | Buffer {
  const { what, filter, after } = request
  const { contents, stale } = read(views, request)
  const n = narrowing(what, filter)
  const revision = contents.revisionFor(n.positions, memo)
  const limit = request.limit ?? opts.defaultLimit ?? Infinity
  const budget = (opts.maxBytes ?? Infinity) - FRAME
  const head = { what, contents, stale }
  return request.by !== undefined
    ? facetsJson({ ...head, by: request.by, revision, after, limit, budget }, n)
    : request.since === undefined
      ? list(head, n, revision, after, limit, budget)
      : since(head, n, request.since.revision, limit, budget)
}

export function createProvisioning (views: AnsweredViews): Provisioning {
  const waitersOf = waitersByBucket(views)
  const tag = (request: BucketRequest): string => tagNow(views, request)
  const cache = answerCache()

  /** The answer kept under `key` for the state `madeFrom` names, else built now (read in the same turn as it). */
  function answerOf (request: BucketRequest, opts: AskOptions, key: string, madeFrom: string, memo?: RevisionMemo): Answer {
    return cache.obtain(key, madeFrom, () => new Answer(answerJson(views, request, opts, memo), madeFrom))
  }

  function ask (request: BucketRequest, opts: AskOptions = {}): Answer {
    return answerOf(request, opts, answerKey(request, opts), tag(request))
  }

  function keep (request: BucketRequest, opts: AskOptions = {}): KeptRequest {
    /**
     * The state last asked about: a generation at one revision and staleness gives one answer (as
     * its tag says). Named, not held: a request kept by a transport keeps no contents alive.
     */
    let seen: { generation: string, revision: number, stale: boolean, tag: string } | undefined
    const memo: RevisionMemo = { generation: '', coarse: -1, revision: 0 }
    const key = answerKey(request, opts)
    const now = (): NonNullable<typeof seen> => {
      const { contents, stale } = read(views, request)
      if (seen?.generation !== contents.generation || seen.revision !== contents.revision || seen.stale !== stale) {
        seen = { generation: contents.generation, revision: contents.revision, stale, tag: tagNow(views, request, memo) }
      }
      return seen
    }
    return {
      request,
      opts,
      tag: () => now().tag,
      answer: () => answerOf(request, opts, key, now().tag, memo)
    }
  }

  const sharedKeeps = new SharedKeeps()

  return {
    overviews: createOverviews(views, waitersOf),
    ask,
    keep,
    tag,
    snapshot: (request, after, limit) => snapshot(views, request, after, limit),
    count: (request) => count(views, request),
    catchUp: (request, ms) => catchUp(views, request, ms),
    changed: async (requests, ms, signal) => await changed(views, waitersOf, requests, ms, signal),
    follow: (request, position, wake) => follow(waitersOf, sharedKeeps, request, position, wake),
    changes: (request, limit) => changes(views, request, limit),
    entry: (what, key) => entry(views, what, key)
  }
}
