// One bucket's entries counted per node and per module as its changes arrive, so that the mesh at
// a glance (docs/glance.md) costs the rows it answers rather than the entries behind them. It holds a
// few numbers a node and a module, nothing an entry; a module's latest write is recounted from
// the bucket's sorted keys only when the entry that held it leaves. A needs module also keeps its
// needs per kind, so that what no registry entry answers (docs/glance.md) costs the module's row;
// what waits since when is read from the module's own needs when its row is made.

import { TOKEN_PATTERN } from '../wire/key-shapes.js'

const TOKEN = new RegExp(TOKEN_PATTERN)

/** A moment as NATS stores it: ms since the epoch, and the ns within that ms. */
export interface Instant {
  readonly ms: number
  readonly nanos: number
}

/** Negative, zero or positive as `a` is before, at or after `b`. */
export function compareInstants (a: Instant, b: Instant): number {
  return a.ms - b.ms || a.nanos - b.nanos
}

/** The entries under one key prefix (a node's, or a node's module's). */
export class Group implements Instant {
  count = 0
  /** The latest write among the entries, and the revision that made it. */
  ms = 0
  nanos = 0
  revision = 0
  /** The entry that held the latest write left: recount before reading. */
  dirty = false

  add (ms: number, nanos: number, revision: number): void {
    this.count++
    this.raise(ms, nanos, revision)
  }

  /** The entries of `other`, which none of this group's are. */
  addGroup (other: Group): void {
    this.count += other.count
    this.raise(other.ms, other.nanos, other.revision)
  }

  /** An entry written at `old` was written again at (ms, nanos). */
  rewrite (old: Instant, ms: number, nanos: number, revision: number): void {
    if (compareInstants({ ms, nanos }, this) < 0 && compareInstants(old, this) === 0) this.dirty = true
    else this.raise(ms, nanos, revision)
  }

  /** An entry written at `old` left. */
  remove (old: Instant): void {
    this.count--
    if (this.count === 0) Object.assign(this, { ms: 0, nanos: 0, revision: 0, dirty: false })
    else if (compareInstants(old, this) === 0) this.dirty = true
  }

  private raise (ms: number, nanos: number, revision: number): void {
    if (ms < this.ms || (ms === this.ms && nanos < this.nanos)) return
    this.ms = ms
    this.nanos = nanos
    this.revision = revision
  }
}

/** How many entries under a key's leading tokens were written after `at`, and the earliest of them (every one when `at` is undefined). */
export type WaitingAfter = (tokens: readonly string[], at: Instant | undefined) => { waiting: number, since: Instant | undefined }

/**
 * A needs module's entries: beside its Group, how many needs of each kind. What waits since when
 * is read from the module's own entries when its row is made: an instant kept per need was 16 to
 * 24 bytes an entry of the process (bench/RESULTS.md, bytes per entry), a row's read is ~50 of them.
 */
export class NeedsGroup extends Group implements ModuleOfNode {
  /** Its needs per kind, each kind's name the tally's one string of it (`Tally.joinKind`). */
  readonly kinds = new Map<string, number>()

  constructor (readonly node: string, readonly module: string, private readonly waitingAfter: WaitingAfter) {
    super()
  }

  /** How many needs were written after `at`, and the earliest of them (every need when `at` is undefined). */
  after (at: Instant | undefined): { waiting: number, since: Instant | undefined } {
    return this.waitingAfter([this.node, this.module], at)
  }
}

/** A module of a node. */
export interface ModuleOfNode {
  readonly node: string
  readonly module: string
}

/** What the bucket holds under one node. */
export interface NodeTally {
  readonly entries: Group
  /** Out-of-shape keys whose first token names this node. */
  outOfShape: number
  /** Per module (needs and applied keys), when the bucket's keys name one. */
  readonly modules: Map<string, Group> | undefined
}

/** Counts a group again from the entries it holds: `tokens` are the key's leading tokens. */
export type Recount = (tokens: readonly string[]) => { count: number, ms: number, nanos: number, revision: number }

/** A key's first two tokens (the second empty when it has one): slices, not a split's array, at a change each. */
function nodeAndModule (key: string): [node: string, module: string] {
  const dot = key.indexOf('.')
  if (dot < 0) return [key, '']
  const next = key.indexOf('.', dot + 1)
  return [key.slice(0, dot), key.slice(dot + 1, next < 0 ? key.length : next)]
}

/** A needs key's third token, its kind. */
function kindOf (key: string): string {
  const start = key.indexOf('.', key.indexOf('.') + 1) + 1
  const end = key.indexOf('.', start)
  return key.slice(start, end < 0 ? key.length : end)
}

/** A run of keys of one node and module given in order (Tally.addInOrder): counted as a group, and for needs each kind and how many of it. */
interface OrderRun {
  node: string
  module: string
  counted: Group
  kinds: Array<string | number>
}

/** The tally as its readers see it: the contents apply every change. */
export type TallyRead = Pick<Tally, 'nodes' | 'node' | 'module' | 'membership' | 'modulesOfKind'>

export class Tally {
  private readonly byNode = new Map<string, NodeTally>()
  private nodesMoved = 0
  /**
   * Needs only: per kind, its name and the modules with needs of it. The modules are their groups
   * and the name one string a kind, not a `<node>.<module>` string a module and a kind and a kind's
   * name a module: those were ~9 bytes an entry at 300k keys (bench/RESULTS.md).
   */
  private readonly byKind = new Map<string, { kind: string, modules: Set<NeedsGroup> }>()
  /** The run of keys `addInOrder` reads: one node's, or one node's module's. */
  private readonly run: OrderRun = { node: '', module: '', counted: new Group(), kinds: [] }

  /**
   * `byModule`: the bucket's second key token is a module (needs, applied); `waitingAfter`, for
   * needs: its modules keep their needs' kinds and read what waits (NeedsGroup).
   */
  constructor (private readonly byModule: boolean, private readonly recount: Recount, private readonly waitingAfter?: WaitingAfter) {}

  /** The modules with needs of `kind`: those a registry write of the kind may change. */
  modulesOfKind (kind: string): ReadonlySet<ModuleOfNode> | undefined {
    return this.byKind.get(kind)?.modules
  }

  /** Counts a need of `key`'s kind in (+1) or out (-1) of its module `g`: the index moves only when the module's first or last need of the kind does. */
  private countKind (key: string, g: Group, change: 1 | -1): void {
    if (!(g instanceof NeedsGroup)) return
    const kind = kindOf(key)
    const was = g.kinds.get(kind) ?? 0
    if (was === 0) {
      if (change > 0) this.joinKind(kind, g)
      return
    }
    if (was + change > 0) {
      g.kinds.set(kind, was + change)
      return
    }
    g.kinds.delete(kind)
    const of = this.byKind.get(kind)
    of?.modules.delete(g)
    if (of?.modules.size === 0) this.byKind.delete(kind)
  }

  /** Counts `count` needs of `kind` into `g`, which had none of it, and lists `g` among the modules with needs of it. */
  private joinKind (kind: string, g: NeedsGroup, count = 1): void {
    let of = this.byKind.get(kind)
    if (of === undefined) this.byKind.set(kind, (of = { kind, modules: new Set() }))
    g.kinds.set(of.kind, count)
    of.modules.add(g)
  }

  /** The group of `module` on `node` in its node's `modules`, made when it has none. */
  private moduleOf (modules: Map<string, Group>, node: string, module: string): Group {
    let g = modules.get(module)
    if (g === undefined) modules.set(module, (g = this.waitingAfter !== undefined ? new NeedsGroup(node, module, this.waitingAfter) : new Group()))
    return g
  }

  /** Moves whenever a node comes or goes: while it holds, `nodes()` names the same ones. */
  get membership (): number {
    return this.nodesMoved
  }

  /** The nodes any key names, in no order. */
  nodes (): IterableIterator<string> {
    return this.byNode.keys()
  }

  /** What the bucket holds under `node`, its groups counted afresh where they had to be. */
  node (node: string): NodeTally | undefined {
    const t = this.byNode.get(node)
    if (t === undefined) return undefined
    this.refresh(t.entries, [node])
    if (t.modules !== undefined) for (const [module, g] of t.modules) this.refresh(g, [node, module])
    return t
  }

  /** The entries of `module` on `node`, or undefined when none. */
  module (node: string, module: string): Group | undefined {
    const g = this.byNode.get(node)?.modules?.get(module)
    if (g !== undefined) this.refresh(g, [node, module])
    return g
  }

  /** An in-shape key put that was not held. */
  add (key: string, ms: number, nanos: number, revision: number): void {
    const [node, module] = nodeAndModule(key)
    const t = this.obtain(node)
    t.entries.add(ms, nanos, revision)
    if (t.modules === undefined) return
    const g = this.moduleOf(t.modules, node, module)
    g.add(ms, nanos, revision)
    this.countKind(key, g, 1)
  }

  /**
   * Counts the in-shape keys held when a load ends, given in key order by their fields (node,
   * module and kind are never decoded, so they are the key's tokens), then `endOrder` once. A
   * node's keys, a module's and a kind's come in one run each: a key is counted into its run, and
   * the run into its groups once it ends, where `add` cost each key its slices and a map read per
   * node, module and kind (bench/RESULTS.md, the cold start at 3M).
   */
  addInOrder (fields: readonly string[], ms: number, nanos: number, revision: number): void {
    const run = this.run
    const node = fields[0] as string
    const module = this.byModule ? fields[1] as string : ''
    if (run.counted.count === 0 || run.node !== node || run.module !== module) {
      this.endOrder()
      run.node = node
      run.module = module
    }
    run.counted.add(ms, nanos, revision)
    if (this.waitingAfter === undefined) return
    const kind = fields[2] as string
    const kinds = run.kinds
    if (kinds[kinds.length - 2] !== kind) kinds.push(kind, 0)
    ;(kinds[kinds.length - 1] as number)++
  }

  /** Counts the run `addInOrder` was reading into its node's and module's groups. */
  endOrder (): void {
    const run = this.run
    const { node, module, counted, kinds } = run
    if (counted.count === 0) return
    const t = this.obtain(node)
    t.entries.addGroup(counted)
    if (t.modules !== undefined) {
      const g = this.moduleOf(t.modules, node, module)
      g.addGroup(counted)
      if (g instanceof NeedsGroup) {
        for (let i = 0; i < kinds.length; i += 2) {
          const kind = kinds[i] as string
          const was = g.kinds.get(kind) ?? 0
          if (was === 0) this.joinKind(kind, g, kinds[i + 1] as number)
          else g.kinds.set(kind, was + (kinds[i + 1] as number))
        }
      }
    }
    run.counted = new Group()
    kinds.length = 0
  }

  /** An in-shape key held, written again. */
  rewrite (key: string, old: Instant, ms: number, nanos: number, revision: number): void {
    const [node, module] = nodeAndModule(key)
    const t = this.byNode.get(node)
    t?.entries.rewrite(old, ms, nanos, revision)
    t?.modules?.get(module)?.rewrite(old, ms, nanos, revision)
  }

  /** An in-shape key held, deleted. */
  remove (key: string, old: Instant): void {
    const [node, module] = nodeAndModule(key)
    const t = this.byNode.get(node)
    if (t === undefined) return
    t.entries.remove(old)
    const g = t.modules?.get(module)
    if (g !== undefined) {
      g.remove(old)
      this.countKind(key, g, -1)
      if (g.count === 0) t.modules?.delete(module)
    }
    this.forget(node, t)
  }

  /** An out-of-shape key put (+1) or deleted (-1): it counts for the node its first token names, when that is a token. */
  outOfShape (key: string, change: 1 | -1): void {
    const node = nodeAndModule(key)[0]
    if (!TOKEN.test(node)) return
    const t = change > 0 ? this.obtain(node) : this.byNode.get(node)
    if (t === undefined) return
    t.outOfShape += change
    this.forget(node, t)
  }

  private obtain (node: string): NodeTally {
    let t = this.byNode.get(node)
    if (t === undefined) {
      this.byNode.set(node, (t = { entries: new Group(), outOfShape: 0, modules: this.byModule ? new Map() : undefined }))
      this.nodesMoved++
    }
    return t
  }

  /** A node no key names any more has no row. */
  private forget (node: string, t: NodeTally): void {
    if (t.entries.count === 0 && t.outOfShape === 0 && this.byNode.delete(node)) this.nodesMoved++
  }

  private refresh (g: Group, tokens: readonly string[]): void {
    if (!g.dirty) return
    Object.assign(g, this.recount(tokens))
    g.dirty = false
  }
}
