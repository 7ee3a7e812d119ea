// The rows of the mesh at a glance (docs/glance.md): a row per node and a row per module on a
// node, joined across the needs, applied and collect buckets from their tallies (store/tally.ts)
// and the registry's kinds, so that a row costs its node's modules, never their entries. Rows are
// kept as made (bounded by their bytes) until a change names their node; while someone watches
// rows change (held waits), the rows a change replaced are kept aside to tell whether it moved them.

import { BUCKETS } from '../wire/key-shapes.js'
import { ProvisionerError } from '../wire/errors.js'
import { MODULE_STATES, type ModuleState } from '../wire/schemas.js'
import type { Contents } from '../store/contents.js'
import { compareInstants, NeedsGroup, type Group, type Instant, type ModuleOfNode, type NodeTally } from '../store/tally.js'
import type { Line, Row } from './pages.js'
import { defined } from '../defined.js'

/** The refusal of a node no key names. */
export function noNode (node: string): ProvisionerError {
  return new ProvisionerError('NOT_FOUND', `no key of buckets ${BUCKETS.needs}, ${BUCKETS.applied} or ${BUCKETS.collect} names node "${node}"; ask GET /v1/nodes (what=nodes) for the nodes there are`)
}

/** The refusal of a module neither needs nor applied holds on a node. */
export function noModule (node: string, module: string): ProvisionerError {
  return new ProvisionerError('NOT_FOUND', `neither ${BUCKETS.needs} nor ${BUCKETS.applied} holds module "${module}" on node "${node}"; ask GET /v1/modules?node=${node} (what=modules) for its modules`)
}

/** A module's state from its needs and its applied entry; undefined when it has neither. */
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

/** The buckets' contents as one answer reads them; the registry only for its kinds (absent while it cannot be read). */
export interface Mesh { needs: Contents, applied: Contents, collect?: Contents, registry?: Contents, stale: boolean }

const present = (g: Group | undefined): Group | undefined => g !== undefined && g.count > 0 ? g : undefined

/** What keeps a module from `applied`, and since when. */
interface Why { waiting: number, since: Instant | undefined, unanswered: number }

/** The needs written after the applied entry (all without one), and those of a kind no registry entry answers. */
function whyOf (mesh: Mesh, needs: Group | undefined, applied: Group | undefined): Why {
  if (!(needs instanceof NeedsGroup)) return { waiting: 0, since: undefined, unanswered: 0 }
  const { waiting, since } = needs.after(applied)
  let unanswered = 0
  for (const [kind, count] of needs.kinds) if (mesh.registry?.entries.get(kind) === undefined) unanswered += count
  return { waiting, since, unanswered }
}

const instantJson = (at: Instant | undefined): string => at === undefined ? 'null' : `"${isoNanos(at)}"`

interface ModuleOf { module: string, needs?: Group, applied?: Group, state: ModuleState, why: Why }

function moduleJson (node: string, m: ModuleOf): string {
  const { needs, applied, state, why } = m
  const appliedJson = applied === undefined ? 'null' : `{"revision":${applied.revision},"updated":"${isoNanos(applied)}"}`
  return `{"node":"${node}","module":"${m.module}","needs":${needs?.count ?? 0},"needsUpdated":${instantJson(needs)},"applied":${appliedJson},"state":"${state}",` +
    `"waiting":${why.waiting},"waitingSince":${instantJson(why.since)},"unanswered":${why.unanswered}}`
}

/** Each module of a node with needs or an applied entry, sorted, with its state and why. */
function * modulesOf (mesh: Mesh, node: string): Generator<ModuleOf> {
  const needs = mesh.needs.tally?.node(node)?.modules
  const applied = mesh.applied.tally?.node(node)?.modules
  const names = new Set([...needs?.keys() ?? [], ...applied?.keys() ?? []])
  for (const module of [...names].sort()) {
    const n = present(needs?.get(module))
    const a = present(applied?.get(module))
    const state = stateOf(n, a)
    if (state !== undefined) yield { module, ...defined({ needs: n, applied: a }), state, why: whyOf(mesh, n, a) }
  }
}

function nodeJson (mesh: Mesh, node: string, modules: readonly ModuleLine[]): string | undefined {
  const t: Array<NodeTally | undefined> = [mesh.needs.tally?.node(node), mesh.applied.tally?.node(node), mesh.collect?.tally?.node(node)]
  if (t.every((x) => x === undefined)) return undefined
  const states: Record<ModuleState, number> = { applied: 0, pending: 0, unapplied: 0, orphaned: 0 }
  let waiting = 0
  let unanswered = 0
  let since: Instant | undefined
  for (const m of modules) {
    states[m.state]++
    waiting += m.why.waiting
    unanswered += m.why.unanswered
    if (m.why.since !== undefined && (since === undefined || compareInstants(m.why.since, since) < 0)) since = m.why.since
  }
  let latest: Group | undefined
  for (const x of t) if (x !== undefined && x.entries.count > 0 && (latest === undefined || compareInstants(x.entries, latest) > 0)) latest = x.entries
  const outOfShape = t.reduce((sum, x) => sum + (x?.outOfShape ?? 0), 0)
  const updated = latest === undefined ? 'null' : `"${new Date(latest.ms).toISOString()}"`
  return `{"node":"${node}","needs":${t[0]?.entries.count ?? 0},"applied":${t[1]?.entries.count ?? 0},"collect":${t[2]?.entries.count ?? 0},"outOfShape":${outOfShape},"updated":${updated},` +
    `"modules":{"applied":${states.applied},"pending":${states.pending},"unapplied":${states.unapplied},"orphaned":${states.orphaned}},` +
    `"waiting":${waiting},"waitingSince":${instantJson(since)},"unanswered":${unanswered}}`
}

/** The nodes any of `contents` names, sorted. */
export function nodesOf (...contents: Array<Contents | undefined>): string[] {
  const names = new Set<string>()
  for (const c of contents) for (const node of c?.tally?.nodes() ?? []) names.add(node)
  return [...names].sort()
}

/** A filter's states as a set (its key names it: the mesh holds at most one list of each of the 15 sets). */
export interface StatesAsked { readonly key: string, readonly states: readonly string[] }

/** The states a filter asks, read once an answer rather than once a row. */
export function statesAsked (states: readonly string[]): StatesAsked {
  const set = MODULE_STATES.filter((state) => states.includes(state))
  return { key: set.join(' '), states: set }
}

/** A row as kept: its JSON and the JSON's UTF-8 length, measured once. */
export interface Kept extends Line { readonly bytes: number }

const keptOf = (json: string): Kept => ({ json, bytes: Buffer.byteLength(json) })

export interface ModuleLine extends Kept { module: string, state: ModuleState, why: Why }

/**
 * A module line in the mesh-wide list of a set of states: a page's row as it is, so that an
 * answer from the list makes nothing a row. Its line is dropped when a change names its node, and
 * the list is mended before it is read again.
 */
export class StateRow implements Row {
  constructor (readonly node: string, readonly key: string, public kept: ModuleLine | undefined) {}

  line (): ModuleLine {
    return this.kept as ModuleLine
  }
}

/** A set of states' lines across the mesh in node and module order; `stale`: the nodes whose part a change dropped. */
interface InStates { rows: StateRow[], stale: Set<string>, bytes: number }

/** A node's rows as they were before a change named it: undefined where they were not kept (then they may have been anything). */
export interface Before { node: Kept | undefined, modules: readonly ModuleLine[] | undefined }

/** A number for each contents read, so that what was made from them can name them without holding them. */
const ids = new WeakMap<Contents, number>()
let lastId = 0
export function idOf (c: Contents): number {
  let id = ids.get(c)
  if (id === undefined) ids.set(c, (id = ++lastId))
  return id
}

/** The most bytes the kept rows may hold (their JSON as UTF-16 and what keeps it): past it they are made again. */
const ROWS_MAX_BYTES = 48 * 1024 * 1024
/** What a kept row holds beside its JSON: the object, its map slot, its key. */
const ROW_OVERHEAD = 160
/** Changes read to find the nodes they touched, at the most; past it every row is made again (a sweep touches them all). */
const CHANGES_READ_MAX = 4096

const lineBytes = (node: string, line: Kept | undefined): number => line === undefined ? 0 : 2 * (line.json.length + node.length) + ROW_OVERHEAD
const linesBytes = (node: string, lines: readonly ModuleLine[] | undefined): number => (lines ?? []).reduce((sum, l) => sum + lineBytes(node, l) + 2 * l.module.length, 0)

/** The index of the first row of `node` in `rows` (sorted by node), or where it would be. */
function firstOf (rows: readonly StateRow[], node: string): number {
  let lo = 0
  let hi = rows.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((rows[mid] as StateRow).node < node) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * Each node's row and module rows as last made: after a change, the rows of the nodes its keys
 * name are forgotten (read from the bucket's change log), so that an answer makes those again and
 * costs no look at any other node. Only nodes some key names have rows kept, and the rows kept are
 * bounded by their bytes.
 */
export class Rows {
  private readonly nodeRows = new Map<string, Kept>()
  private readonly moduleRows = new Map<string, ModuleLine[]>()
  /**
   * Per set of states asked (`linesIn`), the mesh's lines in those states. Its rows reference lines
   * `moduleRows` holds (a change that forgets a node's lines drops them from the list too), so a
   * list counts only its own rows.
   */
  private readonly inStates = new Map<string, InStates>()
  /** Bumped by every `forgetAll`. */
  private cleared = 0
  private bytes = 0
  /** Per bucket, the contents (by id: rows keep no contents alive) and revision the rows are of. */
  private readonly seen = new Map<string, { contents: number, revision: number }>()
  /** The sorted nodes of a set of buckets, by which buckets, with the contents and membership they were read from. */
  private readonly sortedNodes = new Map<string, { from: string, nodes: string[] }>()
  /** While rows are watched: the rows forgotten since the last `drain`, or `all` when every row was. */
  private replaced: { all: boolean, nodes: Map<string, Before> } | undefined

  constructor (private readonly maxBytes = ROWS_MAX_BYTES) {}

  /** The nodes whose rows are kept, and the bytes they hold. */
  get kept (): { nodes: number, bytes: number } {
    return { nodes: new Set([...this.nodeRows.keys(), ...this.moduleRows.keys()]).size, bytes: this.bytes }
  }

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
    const kept = this.nodeRows.get(node)
    if (kept !== undefined) return kept
    const json = nodeJson(mesh, node, this.moduleLines(mesh, node))
    if (json === undefined) return undefined
    const line = keptOf(json)
    this.keep(node, line, undefined)
    return line
  }

  moduleLines (mesh: Mesh, node: string): readonly ModuleLine[] {
    this.refresh(mesh)
    const kept = this.moduleRows.get(node)
    if (kept !== undefined) return kept
    const lines = [...modulesOf(mesh, node)].map((m) => ({ module: m.module, state: m.state, why: m.why, ...keptOf(moduleJson(node, m)) }))
    // A node no needs or applied key names has none: nothing is kept for it.
    if (lines.length > 0) this.keep(node, undefined, lines)
    return lines
  }

  /**
   * The module lines of the whole mesh in the states `asked` names (`statesAsked`), in node and
   * module order. At 3M keys `?state=pending` answers 4,000 lines of 60,000 over 3,000 nodes: made
   * once, the list is mended where changes named a node, so that an answer reads its rows and
   * visits no node. Its rows count in the kept bytes; a list that would pass them is not kept.
   */
  linesIn (mesh: Mesh, asked: StatesAsked): readonly StateRow[] {
    this.refresh(mesh)
    const kept = this.inStates.get(asked.key)
    if (kept !== undefined && kept.stale.size === 0) return kept.rows
    // A list made across a forgetAll is not kept: the lines it references no longer are.
    const cleared = this.cleared
    const stale = kept === undefined ? this.nodes(mesh.needs, mesh.applied) : [...kept.stale].sort()
    const list = this.merged(mesh, asked, kept?.rows ?? [], stale)
    if (this.cleared !== cleared) return list.rows
    if (kept !== undefined) {
      this.inStates.delete(asked.key)
      this.bytes -= kept.bytes
    }
    if (this.bytes + list.bytes <= this.maxBytes) {
      this.inStates.set(asked.key, list)
      this.bytes += list.bytes
    }
    return list.rows
  }

  /** `rows` with the part of each node of `stale` (sorted) made again from its lines now. */
  private merged (mesh: Mesh, asked: StatesAsked, rows: readonly StateRow[], stale: readonly string[]): InStates {
    const out: StateRow[] = []
    let bytes = 0
    const add = (row: StateRow): void => {
      out.push(row)
      bytes += ROW_OVERHEAD + 2 * row.key.length
    }
    let i = 0
    for (const node of stale) {
      while (i < rows.length && (rows[i] as StateRow).node < node) add(rows[i++] as StateRow)
      while (i < rows.length && (rows[i] as StateRow).node === node) i++
      for (const line of this.moduleLines(mesh, node)) {
        if (asked.states.includes(line.state)) add(new StateRow(node, `${node}.${line.module}`, line))
      }
    }
    while (i < rows.length) add(rows[i++] as StateRow)
    return { rows: out, stale: new Set(), bytes }
  }

  /** Starts keeping aside the rows changes replace, until `unwatch`. */
  watch (): void {
    this.replaced ??= { all: false, nodes: new Map() }
  }

  unwatch (): void {
    this.replaced = undefined
  }

  /** The rows replaced since the last drain (refreshed from `mesh` first), and forgets them. */
  drain (mesh: Mesh): { all: boolean, nodes: Map<string, Before> } {
    this.refresh(mesh)
    const out = this.replaced ?? { all: false, nodes: new Map() }
    if (this.replaced !== undefined) this.replaced = { all: false, nodes: new Map() }
    return out
  }

  private keep (node: string, row: Kept | undefined, lines: ModuleLine[] | undefined): void {
    const bytes = lineBytes(node, row) + linesBytes(node, lines)
    if (this.bytes + bytes > this.maxBytes) this.forgetAll()
    if (row !== undefined) this.nodeRows.set(node, row)
    if (lines !== undefined) this.moduleRows.set(node, lines)
    this.bytes += bytes
  }

  private forget (node: string): void {
    const row = this.nodeRows.get(node)
    const lines = this.moduleRows.get(node)
    if (this.replaced !== undefined && !this.replaced.nodes.has(node)) this.replaced.nodes.set(node, { node: row, modules: lines })
    this.bytes -= lineBytes(node, row) + linesBytes(node, lines)
    this.nodeRows.delete(node)
    this.moduleRows.delete(node)
    for (const [key, list] of this.inStates) {
      if (list.stale.has(node)) continue
      // Mending more nodes than a refresh reads costs what making the list again does.
      if (list.stale.size >= CHANGES_READ_MAX) {
        this.inStates.delete(key)
        this.bytes -= list.bytes
        continue
      }
      list.stale.add(node)
      for (let i = firstOf(list.rows, node); i < list.rows.length && (list.rows[i] as StateRow).node === node; i++) (list.rows[i] as StateRow).kept = undefined
    }
  }

  private forgetAll (): void {
    if (this.replaced !== undefined) this.replaced.all = true
    this.nodeRows.clear()
    this.moduleRows.clear()
    this.inStates.clear()
    this.bytes = 0
    this.cleared++
  }

  /** The mesh last looked at: one answer's rows read one mesh, which is looked at once. */
  private looked: WeakRef<Mesh> | undefined

  /** Forgets the rows the changes since the last look may have changed: every row, for contents read again or many changes. */
  private refresh (mesh: Mesh): void {
    if (this.looked?.deref() === mesh) return
    this.looked = new WeakRef(mesh)
    for (const what of ['needs', 'applied', 'collect', 'registry'] as const) {
      const c = mesh[what]
      // A registry that cannot be read answers no kind: its rows are those of no registry.
      if (c === undefined && what !== 'registry') continue
      const at = this.seen.get(what)
      const id = c === undefined ? 0 : idOf(c)
      const revision = c?.revision ?? 0
      if (at?.contents === id && at.revision === revision) continue
      this.seen.set(what, { contents: id, revision })
      if (c === undefined || at?.contents !== id || !this.forgetTouched(mesh, c, at.revision)) this.forgetAll()
    }
  }

  /** Forgets the rows of each node a key changed after `revision` names; false when there were too many to read. */
  private forgetTouched (mesh: Mesh, c: Contents, revision: number): boolean {
    let read = 0
    for (const node of touchedNodes(mesh, c, revision)) {
      if (++read > CHANGES_READ_MAX) return false
      this.forget(node)
    }
    return true
  }
}

/** A registry change of `kind`: the modules with needs of it, whose `unanswered` it may move. */
export function modulesOfKind (mesh: Mesh, kind: string): Iterable<ModuleOfNode> {
  return mesh.needs.tally?.modulesOfKind(kind) ?? []
}

/** Whether a key of bucket `what` names a module row by its second token (a collect key's is its collection). */
export const namesModule = (what: string): boolean => what === 'needs' || what === 'applied'

/**
 * The node (and, for needs and applied keys, the module) of each key of `c` changed after
 * `revision`, latest change first-seen order; a registry change names the modules with needs of its kind.
 */
export function * touched (mesh: Mesh, c: Contents, revision: number): Generator<{ node: string, module: string | undefined }> {
  for (const [key] of c.changesSince(revision)) {
    if (c.what === 'registry') {
      for (const { node, module } of modulesOfKind(mesh, key)) yield { node, module }
      continue
    }
    const dot = key.indexOf('.')
    if (dot < 0) {
      yield { node: key, module: undefined }
      continue
    }
    const end = key.indexOf('.', dot + 1)
    yield { node: key.slice(0, dot), module: namesModule(c.what) ? key.slice(dot + 1, end < 0 ? key.length : end) : undefined }
  }
}

function * touchedNodes (mesh: Mesh, c: Contents, revision: number): Generator<string> {
  for (const t of touched(mesh, c, revision)) yield t.node
}
