// The mesh at a glance (SPEC §10): a row per node and a row per module on a node, joined across
// the needs, applied and collect buckets from their tallies (store/tally.ts), so that an answer
// costs its nodes and modules, never their entries. Values stay opaque: keys, revisions and times only.

import { hash } from 'node:crypto'
import { BUCKETS } from '../wire/key-shapes.js'
import { ProvisionerError } from '../wire/errors.js'
import type { OverviewQuery, Query } from '../wire/request.js'
import type { ModuleState } from '../wire/schemas.js'
import type { Contents } from '../store/contents.js'
import { compareInstants, type Group, type Instant, type NodeTally } from '../store/tally.js'
import type { AnsweredViews } from './port.js'
import { Answer, answerCache, type AskOptions } from './provisioning.js'
import { pageOf, type Line, type Row } from './pages.js'
import { defined } from '../defined.js'

/** The refusal of a node no key names. */
export function noNode (node: string): ProvisionerError {
  return new ProvisionerError('NOT_FOUND', `no key of buckets ${BUCKETS.needs}, ${BUCKETS.applied} or ${BUCKETS.collect} names node "${node}"; ask GET /v1/nodes (what=nodes) for the nodes there are`)
}

/** The refusal of a module neither needs nor applied holds on a node. */
export function noModule (node: string, module: string): ProvisionerError {
  return new ProvisionerError('NOT_FOUND', `neither ${BUCKETS.needs} nor ${BUCKETS.applied} holds module "${module}" on node "${node}"; ask GET /v1/modules?node=${node} (what=modules) for its modules`)
}

/** A module's state from its needs and its applied entry (SPEC §10); undefined when it has neither. */
export function stateOf (needs: Instant | undefined, applied: Instant | undefined): ModuleState | undefined {
  if (applied === undefined) return needs === undefined ? undefined : 'unapplied'
  if (needs === undefined) return 'orphaned'
  return compareInstants(needs, applied) > 0 ? 'pending' : 'applied'
}

/**
 * Each second's `YYYY-MM-DDTHH:MM:SS.`, as Date formats it: a modules answer writes two moments a
 * row, and Date's formatting was most of its cost. Writes come in runs of seconds; a bound keeps it small.
 */
const SECONDS = new Map<number, string>()
const SECONDS_MAX = 4096

/** A moment as RFC 3339 with the nanoseconds NATS gives. */
export function isoNanos ({ ms, nanos }: Instant): string {
  const second = Math.floor(ms / 1000)
  let head = SECONDS.get(second)
  if (head === undefined) {
    if (SECONDS.size >= SECONDS_MAX) SECONDS.clear()
    SECONDS.set(second, (head = new Date(second * 1000).toISOString().slice(0, 20)))
  }
  return `${head}${String((ms - second * 1000) * 1_000_000 + nanos).padStart(9, '0')}Z`
}

/** Whether a filter keeps a row's field value (the Query's filter, whatever it holds). */
function keeps (filter: OverviewQuery['filter'], field: string, value: string): boolean {
  const wanted = filter[field]
  return wanted === undefined || wanted.includes(value)
}

/** The three buckets' contents as one answer reads them. */
interface Mesh { needs: Contents, applied: Contents, collect?: Contents, stale: boolean }

const present = (g: Group | undefined): Group | undefined => g !== undefined && g.count > 0 ? g : undefined

function moduleJson (node: string, module: string, needs: Group | undefined, applied: Group | undefined, state: ModuleState): string {
  const appliedJson = applied === undefined ? 'null' : `{"revision":${applied.revision},"updated":"${isoNanos(applied)}"}`
  return `{"node":"${node}","module":"${module}","needs":${needs?.count ?? 0},"needsUpdated":${needs === undefined ? 'null' : `"${isoNanos(needs)}"`},"applied":${appliedJson},"state":"${state}"}`
}

/** Each module of a node with needs or an applied entry, sorted, with its state. */
function * modulesOf (mesh: Mesh, node: string): Generator<{ module: string, needs?: Group, applied?: Group, state: ModuleState }> {
  const needs = mesh.needs.tally?.node(node)?.modules
  const applied = mesh.applied.tally?.node(node)?.modules
  const names = new Set([...needs?.keys() ?? [], ...applied?.keys() ?? []])
  for (const module of [...names].sort()) {
    const n = present(needs?.get(module))
    const a = present(applied?.get(module))
    const state = stateOf(n, a)
    if (state !== undefined) yield { module, ...defined({ needs: n, applied: a }), state }
  }
}

function nodeJson (mesh: Mesh, node: string): string | undefined {
  const t: Array<NodeTally | undefined> = [mesh.needs.tally?.node(node), mesh.applied.tally?.node(node), mesh.collect?.tally?.node(node)]
  if (t.every((x) => x === undefined)) return undefined
  const states: Record<ModuleState, number> = { applied: 0, pending: 0, unapplied: 0, orphaned: 0 }
  for (const m of modulesOf(mesh, node)) states[m.state]++
  let latest: Group | undefined
  for (const x of t) if (x !== undefined && x.entries.count > 0 && (latest === undefined || compareInstants(x.entries, latest) > 0)) latest = x.entries
  const outOfShape = t.reduce((sum, x) => sum + (x?.outOfShape ?? 0), 0)
  const updated = latest === undefined ? 'null' : `"${new Date(latest.ms).toISOString()}"`
  return `{"node":"${node}","needs":${t[0]?.entries.count ?? 0},"applied":${t[1]?.entries.count ?? 0},"collect":${t[2]?.entries.count ?? 0},"outOfShape":${outOfShape},"updated":${updated},` +
    `"modules":{"applied":${states.applied},"pending":${states.pending},"unapplied":${states.unapplied},"orphaned":${states.orphaned}}}`
}

/** The nodes any of `contents` names, sorted. */
function nodesOf (...contents: Array<Contents | undefined>): string[] {
  const names = new Set<string>()
  for (const c of contents) for (const node of c?.tally?.nodes() ?? []) names.add(node)
  return [...names].sort()
}

/** One question across buckets asked again and again: its answer is kept while its tag holds. */
export interface OverviewQuestion {
  readonly query: OverviewQuery
  tag: () => string
  answer: () => Answer
}

export interface Overviews {
  ask: (query: OverviewQuery, opts?: AskOptions) => Answer
  question: (query: OverviewQuery, opts?: AskOptions) => OverviewQuestion
  /** The bucket questions whose changes may change the answer to `query`: a held request wakes only on those. */
  moves: (query: OverviewQuery) => Query[]
  /** Names the answer to `query`: a digest of its bytes, so that it moves only when the answer does (SPEC §10). */
  tag: (query: OverviewQuery, opts?: AskOptions) => string
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

/** Nodes whose rows are kept at the most; past it the memos start again (a mesh this large rebuilds more often). */
const MEMO_MAX = 65536
/** Changes read to find the nodes they touched, at the most; past it every row is made again (a sweep touches them all). */
const CHANGES_READ_MAX = 4096

/** A row as kept: its JSON and the JSON's UTF-8 length, measured once. */
interface Kept extends Line { readonly bytes: number }

const keptOf = (json: string): Kept => ({ json, bytes: Buffer.byteLength(json) })

interface ModuleLine extends Kept { module: string, state: ModuleState }

/** A number for each contents read, so that what was made from them can name them without holding them. */
const ids = new WeakMap<Contents, number>()
let lastId = 0
function idOf (c: Contents): number {
  let id = ids.get(c)
  if (id === undefined) ids.set(c, (id = ++lastId))
  return id
}

/**
 * Each node's row and module rows as last made: after a change, the rows of the nodes its keys
 * name are forgotten (read from the bucket's change log), so that an answer makes those again and
 * costs no look at any other node.
 */
class Rows {
  private readonly nodeRows = new Map<string, Kept | undefined>()
  private readonly moduleRows = new Map<string, ModuleLine[]>()
  /** Per bucket, the contents (by id: rows keep no contents alive) and revision the rows are of. */
  private readonly seen = new Map<Contents['what'], { contents: number, revision: number }>()
  /** The sorted nodes of a set of buckets, by which buckets, with the contents and membership they were read from. */
  private readonly sortedNodes = new Map<string, { from: string, nodes: string[] }>()

  /** The nodes any of `contents` names, sorted: sorted again only when a node came or went. */
  nodes (...contents: Array<Contents | undefined>): string[] {
    const key = contents.map((c) => c?.what ?? '').join(' ')
    const from = contents.map((c) => c === undefined ? '' : `${idOf(c)}.${c.tally?.membership ?? ''}`).join(' ')
    const kept = this.sortedNodes.get(key)
    if (kept?.from === from) return kept.nodes
    const nodes = nodesOf(...contents)
    this.sortedNodes.set(key, { from, nodes })
    return nodes
  }

  nodeRow (mesh: Mesh, node: string): Kept | undefined {
    this.refresh(mesh)
    if (this.nodeRows.has(node)) return this.nodeRows.get(node)
    const json = nodeJson(mesh, node)
    const line = json === undefined ? undefined : keptOf(json)
    if (this.nodeRows.size >= MEMO_MAX) this.nodeRows.clear()
    this.nodeRows.set(node, line)
    return line
  }

  moduleLines (mesh: Mesh, node: string): ModuleLine[] {
    this.refresh(mesh)
    const kept = this.moduleRows.get(node)
    if (kept !== undefined) return kept
    const lines = [...modulesOf(mesh, node)].map((m) => ({ module: m.module, state: m.state, ...keptOf(moduleJson(node, m.module, m.needs, m.applied, m.state)) }))
    if (this.moduleRows.size >= MEMO_MAX) this.moduleRows.clear()
    this.moduleRows.set(node, lines)
    return lines
  }

  /** The mesh last looked at: one answer's rows read one mesh, which is looked at once. */
  private looked: WeakRef<Mesh> | undefined

  /** Forgets the rows the changes since the last look may have changed: every row, for contents read again or many changes. */
  private refresh (mesh: Mesh): void {
    if (this.looked?.deref() === mesh) return
    this.looked = new WeakRef(mesh)
    for (const c of [mesh.needs, mesh.applied, mesh.collect]) {
      if (c === undefined) continue
      const at = this.seen.get(c.what)
      const id = idOf(c)
      if (at?.contents === id && at.revision === c.revision) continue
      this.seen.set(c.what, { contents: id, revision: c.revision })
      if (at?.contents !== id || !this.forgetTouched(c, at.revision)) {
        this.nodeRows.clear()
        this.moduleRows.clear()
      }
    }
  }

  /** Forgets the rows of each node a key changed after `revision` names; false when there were too many to read. */
  private forgetTouched (c: Contents, revision: number): boolean {
    let read = 0
    for (const [key] of c.changesSince(revision)) {
      if (++read > CHANGES_READ_MAX) return false
      const node = key.split('.', 1)[0] as string
      this.nodeRows.delete(node)
      this.moduleRows.delete(node)
    }
    return true
  }
}

/** The buckets an overview reads, each refusing as its own answers do. */
function read (views: AnsweredViews, buckets: ReadonlyArray<'needs' | 'applied' | 'collect'>): Mesh {
  // Each refuses as its own answers do: a missing or loading bucket is named.
  const held = Object.fromEntries(buckets.map((b) => [b, views.byWhat[b].read()]))
  return { ...held, stale: buckets.some((b) => views.byWhat[b].stale) } as unknown as Mesh
}

const bucketsOf = (query: OverviewQuery): Array<'needs' | 'applied' | 'collect'> => query.what === 'nodes' ? ['needs', 'applied', 'collect'] : ['needs', 'applied']

/** The state of the buckets an answer to `query` reads: while it holds, the answer is the same. */
function readState (views: AnsweredViews, query: OverviewQuery): string {
  const buckets = bucketsOf(query)
  const mesh = read(views, buckets)
  const positions = new Map<number, readonly string[]>()
  if (query.filter['node'] !== undefined) positions.set(0, query.filter['node'])
  if (query.filter['module'] !== undefined && positions.size > 0) positions.set(1, query.filter['module'])
  // collect's second token is a collection, not a module: only the node narrows it.
  const parts = buckets.map((b) => {
    const c = mesh[b] as Contents
    return `${c.revisionFor(b === 'collect' ? new Map([...positions].filter(([p]) => p === 0)) : positions)}.${c.generation}`
  })
  return `${parts.join('-')}-${mesh.stale ? 's' : 'c'}`
}

/** The nodes document. */
function nodesAnswer (memo: Rows, query: OverviewQuery, mesh: Mesh, limit: number, budget: number): string {
  const rows = function * (): Generator<Row> {
    for (const node of memo.nodes(mesh.needs, mesh.applied, mesh.collect)) {
      if (keeps(query.filter, 'node', node)) yield { key: node, line: () => memo.nodeRow(mesh, node) as Kept }
    }
  }
  const after = query.after
  const page = pageOf(rows(), after === undefined ? undefined : (row) => row.key > after, limit, budget)
  return `{"what":"nodes","stale":${mesh.stale},"total":${page.total},"nodes":[${page.rows}]${page.tail}}`
}

/** The modules document. */
function modulesAnswer (memo: Rows, query: OverviewQuery, mesh: Mesh, limit: number, budget: number): string {
  const { filter } = query
  const rows = function * (): Generator<Row> {
    for (const node of memo.nodes(mesh.needs, mesh.applied)) {
      if (!keeps(filter, 'node', node)) continue
      for (const m of memo.moduleLines(mesh, node)) {
        if (keeps(filter, 'module', m.module) && keeps(filter, 'state', m.state)) yield { key: `${node}.${m.module}`, line: () => m }
      }
    }
  }
  const dot = query.after?.indexOf('.') ?? -1
  const [an, am] = query.after === undefined ? [] : dot < 0 ? [query.after, ''] : [query.after.slice(0, dot), query.after.slice(dot + 1)]
  const past = an === undefined
    ? undefined
    : (row: Row) => {
        const [node, module] = row.key.split('.') as [string, string]
        return node > an || (node === an && module > (am as string))
      }
  const page = pageOf(rows(), past, limit, budget)
  return `{"what":"modules","stale":${mesh.stale},"total":${page.total},"modules":[${page.rows}]${page.tail}}`
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

export function createOverviews (views: AnsweredViews): Overviews {
  const memo = new Rows()
  const cache = answerCache()

  const keyOf = (query: OverviewQuery, opts: AskOptions): string => JSON.stringify([query.what, query.filter, query.after, query.limit, opts.defaultLimit, opts.maxBytes])

  /** The answer kept under `key` for `state` (the buckets' state read now), else built now. */
  function answerAt (query: OverviewQuery, opts: AskOptions, key: string, state: string): Answer {
    return cache.obtain(key, state, () => {
      const mesh = read(views, bucketsOf(query))
      const limit = query.limit ?? opts.defaultLimit ?? Infinity
      const budget = (opts.maxBytes ?? Infinity) - FRAME
      const json = query.what === 'nodes' ? nodesAnswer(memo, query, mesh, limit, budget) : modulesAnswer(memo, query, mesh, limit, budget)
      // Encoded once: the digest reads the bytes the answer keeps.
      const bytes = Buffer.from(json)
      return new Answer(bytes, digest(bytes))
    })
  }

  const ask = (query: OverviewQuery, opts: AskOptions = {}): Answer => answerAt(query, opts, keyOf(query, opts), readState(views, query))

  return {
    ask,
    moves (query) {
      // collect's second token is a collection, not a module: only the node narrows it.
      const node = query.filter['node']
      const module = query.filter['module']
      return bucketsOf(query).map((what) => ({ what, filter: defined({ node, module: what === 'collect' ? undefined : module }) }))
    },
    tag: (query, opts) => ask(query, opts).tag,
    question (query, opts = {}) {
      /** The answer last built, and the state it was built from: a quiet mesh costs a comparison. */
      let seen: { state: string, answer: Answer } | undefined
      const key = keyOf(query, opts)
      const now = (): Answer => {
        const state = readState(views, query)
        if (seen?.state !== state) seen = { state, answer: answerAt(query, opts, key, state) }
        return seen.answer
      }
      return { query, tag: () => now().tag, answer: now }
    },
    node (node) {
      const query: OverviewQuery = { what: 'nodes', filter: { node: [node] } }
      const line = memo.nodeRow(read(views, bucketsOf(query)), node)
      if (line === undefined) throw noNode(node)
      return { json: line.json, tag: digest(line.json) }
    },
    module (node, module) {
      const query: OverviewQuery = { what: 'modules', filter: { node: [node], module: [module] } }
      const m = memo.moduleLines(read(views, bucketsOf(query)), node).find((x) => x.module === module)
      if (m === undefined) throw noModule(node, module)
      return { json: m.json, tag: digest(m.json) }
    },
    lastWrites: () => lastWrites(views)
  }
}
