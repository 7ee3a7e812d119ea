// The mesh at a glance (docs/glance.md): the nodes and modules documents, their rows made by
// rows.ts, so that an answer costs its nodes and modules, never their entries; the held waits on
// them (overview-waiters.ts) and their live rows (live-rows.ts) read the same rows. Values stay
// opaque: keys, revisions and times only.

import { hash } from 'node:crypto'
import type { OverviewRequest } from '../wire/request.js'
import type { Contents } from '../store/contents.js'
import type { AnsweredViews } from './port.js'
import { Answer, answerCache, type AskOptions } from './answer.js'
import { bucketsOf, keeps, readMesh } from './mesh.js'
import { pageOf, type Page, type Row } from './pages.js'
import { ByteWriter } from '../store/byte-writer.js'
import { nodesOf, noModule, noNode, Rows, statesAsked, type Kept, type Mesh, type StateRow } from './rows.js'
import { OverviewWaiters } from './overview-waiters.js'
import { LiveRows } from './live-rows.js'
import { waitersByBucket } from './waiters.js'
import type { ModuleState } from '../wire/schemas.js'

export { isoNanos, noModule, noNode, stateOf } from './rows.js'

/** A request across buckets kept to be asked again and again: its answer is kept while its tag holds. */
export interface KeptOverviewRequest {
  readonly request: OverviewRequest
  tag: () => string
  answer: () => Answer
}

export interface Overviews {
  ask: (request: OverviewRequest, opts?: AskOptions) => Answer
  keep: (request: OverviewRequest, opts?: AskOptions) => KeptOverviewRequest
  /**
   * Resolves when a change may have moved the answer to `request` (a row it keeps, or kept, changed
   * its bytes), when a view's state changes, when `signal` aborts, or after `ms`: a write that moves
   * no row the answer shows wakes nobody.
   */
  changed: (request: OverviewRequest, ms: number, signal?: AbortSignal) => Promise<void>
  /** The rows of `request` live, for an event stream. */
  readonly live: LiveRows
  /** The module rows per state, the earliest waitingSince and the unanswered needs of the whole mesh: the gauges' reading (undefined while a bucket cannot be read). */
  totals: () => Totals | undefined
  /** Names the answer to `request`: a digest of its bytes, so that it moves only when the answer does (docs/glance.md). */
  tag: (request: OverviewRequest, opts?: AskOptions) => string
  /** One node's row; NOT_FOUND when no key names it. */
  node: (node: string) => { json: string, tag: string }
  /** One module's row on a node; NOT_FOUND when neither needs nor applied has it. */
  module: (node: string, module: string) => { json: string, tag: string }
  /** The latest write (ms since the epoch) of each node's entries still there, for each node that has entries: a gauge's reading. */
  lastWrites: () => Map<string, number>
}

/** Room kept for the answer's head and tail around the rows. */
const FRAME = 512

/**
 * A strong validator of an answer's bytes. These answers carry no revision and a write the answer
 * does not show (an applied module rewritten, under `?state=pending`) must leave its ETag alone.
 */
function digest (json: string | Buffer): string {
  return hash('sha256', json, 'base64url').slice(0, 22)
}

/** The module rows per state, the earliest waitingSince (ms since the epoch) and the unanswered needs of the whole mesh. */
export interface Totals { states: Record<ModuleState, number>, waitingSinceMs: number | undefined, unanswered: number }

/** The state of the buckets an answer to `request` reads: while it holds, the answer is the same. */
function readState (views: AnsweredViews, request: OverviewRequest): string {
  const buckets = bucketsOf(request)
  const mesh = readMesh(views, buckets)
  const positions = new Map<number, readonly string[]>()
  if (request.filter['node'] !== undefined) positions.set(0, request.filter['node'])
  if (request.filter['module'] !== undefined && positions.size > 0) positions.set(1, request.filter['module'])
  // collect's second token is a collection, not a module: only the node narrows it.
  const parts = buckets.map((b) => {
    const c = mesh[b] as Contents
    return `${c.revisionFor(b === 'collect' ? new Map([...positions].filter(([p]) => p === 0)) : positions)}.${c.generation}`
  })
  // A registry write is rare, and moves `unanswered` of rows anywhere: any one is read as a change.
  const registry = mesh.registry === undefined ? 'none' : `${mesh.registry.revision}.${mesh.registry.generation}`
  return `${parts.join('-')}-${registry}-${mesh.stale ? 's' : 'c'}`
}

/**
 * Where overview answers are written, one at a time, each copied out whole: it keeps the room of
 * the largest written, at most the answer size bound. An answer of 4,000 rows joined as text, then
 * encoded, left two megabytes of text a request to the collector, which at 3M keys marks a heap
 * of 200 MB.
 */
const written = new ByteWriter()

/** An overview document's bytes: `head`, the page's rows, its tail. */
function documentOf (head: string, page: Page): Buffer {
  const w = written
  w.length = 0
  w.latin1(head)
  const rows = page.rows
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) w.byte(0x2c)
    w.utf8(rows[i] as string)
  }
  w.utf8(`]${page.tail}}`)
  return Buffer.from(w.view())
}

/** The nodes document. */
function nodesAnswer (memo: Rows, request: OverviewRequest, mesh: Mesh, limit: number, budget: number): Buffer {
  const rows = function * (): Generator<Row> {
    for (const node of memo.nodes(mesh.needs, mesh.applied, mesh.collect)) {
      if (keeps(request.filter, 'node', node)) yield { key: node, line: () => memo.nodeRow(mesh, node) as Kept }
    }
  }
  const after = request.after
  const page = pageOf(rows(), after === undefined ? undefined : (row) => row.key > after, limit, budget)
  return documentOf(`{"what":"nodes","stale":${mesh.stale},"total":${page.total},"nodes":[`, page)
}

/** The modules document. */
function modulesAnswer (memo: Rows, request: OverviewRequest, mesh: Mesh, limit: number, budget: number): Buffer {
  const { filter } = request
  const asked = filter['state'] === undefined ? undefined : statesAsked(filter['state'])
  const rows = function * (): Generator<Row> {
    for (const node of memo.nodes(mesh.needs, mesh.applied)) {
      if (!keeps(filter, 'node', node)) continue
      for (const m of memo.moduleLines(mesh, node)) {
        if (keeps(filter, 'module', m.module) && (asked === undefined || asked.states.includes(m.state))) yield { key: `${node}.${m.module}`, line: () => m }
      }
    }
  }
  const inStates = function * (list: readonly StateRow[]): Generator<Row> {
    for (const row of list) if (keeps(filter, 'module', row.line().module)) yield row
  }
  // A filter by state alone reads the mesh's list of those states; one by node reads those nodes.
  const source = asked === undefined || filter['node'] !== undefined
    ? rows()
    : filter['module'] === undefined ? memo.linesIn(mesh, asked) : inStates(memo.linesIn(mesh, asked))
  const dot = request.after?.indexOf('.') ?? -1
  const [an, am] = request.after === undefined ? [] : dot < 0 ? [request.after, ''] : [request.after.slice(0, dot), request.after.slice(dot + 1)]
  const past = an === undefined
    ? undefined
    : (row: Row) => {
        const [node, module] = row.key.split('.') as [string, string]
        return node > an || (node === an && module > (am as string))
      }
  const page = pageOf(source, past, limit, budget)
  return documentOf(`{"what":"modules","stale":${mesh.stale},"total":${page.total},"modules":[`, page)
}

/** As Overviews.lastWrites. */
function lastWrites (views: AnsweredViews): Map<string, number> {
  // A gauge reads what is there: a bucket missing or loading adds nothing, and refuses nothing.
  const held = (['needs', 'applied', 'collect'] as const).map((b) => views.byWhat[b].status().state === 'live' ? views.byWhat[b].read() : undefined)
  const out = new Map<string, number>()
  for (const node of nodesOf(...held)) {
    for (const c of held) {
      const t = c?.tally?.node(node)
      if (t !== undefined && t.entries.count > 0 && t.entries.ms > (out.get(node) ?? -Infinity)) out.set(node, t.entries.ms)
    }
  }
  return out
}

/** As Overviews.totals. */
function totals (views: AnsweredViews, memo: Rows): Totals | undefined {
  let mesh: Mesh
  try {
    mesh = readMesh(views, ['needs', 'applied'])
  } catch {
    return undefined
  }
  const states: Record<ModuleState, number> = { applied: 0, pending: 0, unapplied: 0, orphaned: 0 }
  let waitingSinceMs: number | undefined
  let unanswered = 0
  for (const node of memo.nodes(mesh.needs, mesh.applied)) {
    for (const m of memo.moduleLines(mesh, node)) {
      states[m.state]++
      unanswered += m.why.unanswered
      const since = m.why.since
      if (since !== undefined && (waitingSinceMs === undefined || since.ms < waitingSinceMs)) waitingSinceMs = since.ms
    }
  }
  return { states, waitingSinceMs, unanswered }
}

/**
 * A request kept to be asked again: it holds the state last asked about and the tag of its answer,
 * so that a quiet mesh costs a comparison. The answer itself is held weakly: a transport keeps a
 * thousand requests by the bytes of their text, and an overview's answer can be a megabyte. One
 * request's tag and answer are read in one run of code, which holds the answer that long; a later
 * ask finds it in the answer cache, whose bound counts it, or builds it again.
 */
function keptOverview (request: OverviewRequest, answerAt: (state: string) => Answer, stateNow: () => string): KeptOverviewRequest {
  let seen: { state: string, tag: string, answer: WeakRef<Answer> } | undefined
  const answer = (): Answer => {
    const state = stateNow()
    const held = seen?.state === state ? seen.answer.deref() : undefined
    if (held !== undefined) return held
    const built = answerAt(state)
    seen = { state, tag: built.tag, answer: new WeakRef(built) }
    return built
  }
  const tag = (): string => seen !== undefined && seen.state === stateNow() ? seen.tag : answer().tag
  return { request, tag, answer }
}

/** `waitersOf`: each bucket's waiters, shared with the answers to the buckets' requests (provisioning.ts). */
export function createOverviews (views: AnsweredViews, waitersOf = waitersByBucket(views)): Overviews {
  const memo = new Rows()
  const cache = answerCache()
  const waiters = new OverviewWaiters(views, memo)

  const keyOf = (request: OverviewRequest, opts: AskOptions): string => JSON.stringify([request.what, request.filter, request.after, request.limit, opts.defaultLimit, opts.maxBytes])

  /** The answer kept under `key` for `state` (the buckets' state read now), else built now. */
  function answerAt (request: OverviewRequest, opts: AskOptions, key: string, state: string): Answer {
    return cache.obtain(key, state, () => {
      const mesh = readMesh(views, bucketsOf(request))
      const limit = request.limit ?? opts.defaultLimit ?? Infinity
      const budget = (opts.maxBytes ?? Infinity) - FRAME
      const bytes = request.what === 'nodes' ? nodesAnswer(memo, request, mesh, limit, budget) : modulesAnswer(memo, request, mesh, limit, budget)
      return new Answer(bytes, digest(bytes))
    })
  }

  const ask = (request: OverviewRequest, opts: AskOptions = {}): Answer => answerAt(request, opts, keyOf(request, opts), readState(views, request))

  return {
    ask,
    changed: async (request, ms, signal) => await waiters.changed(request, ms, signal),
    live: new LiveRows(views, memo, waitersOf),
    totals: () => totals(views, memo),
    tag: (request, opts) => ask(request, opts).tag,
    keep (request, opts = {}) {
      const key = keyOf(request, opts)
      return keptOverview(request, (state) => answerAt(request, opts, key, state), () => readState(views, request))
    },
    node (node) {
      const line = memo.nodeRow(readMesh(views, bucketsOf({ what: 'nodes', filter: {} })), node)
      if (line === undefined) throw noNode(node)
      return { json: line.json, tag: digest(line.json) }
    },
    module (node, module) {
      const m = memo.moduleLines(readMesh(views, bucketsOf({ what: 'modules', filter: {} })), node).find((x) => x.module === module)
      if (m === undefined) throw noModule(node, module)
      return { json: m.json, tag: digest(m.json) }
    },
    lastWrites: () => lastWrites(views)
  }
}
