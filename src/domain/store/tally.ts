// One bucket's entries counted per node and per module as its changes arrive, so that the mesh at
// a glance (SPEC §10) costs the rows it answers rather than the entries behind them. It holds a
// few numbers a node and a module, nothing an entry; a module's latest write is recounted from
// the bucket's sorted keys only when the entry that held it leaves.

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
    if (compareInstants({ ms, nanos }, this) < 0) return
    this.ms = ms
    this.nanos = nanos
    this.revision = revision
  }
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

/** The tally as its readers see it: the contents apply every change. */
export type TallyRead = Pick<Tally, 'nodes' | 'node' | 'module' | 'membership'>

export class Tally {
  private readonly byNode = new Map<string, NodeTally>()
  private nodesMoved = 0

  /** `byModule`: the bucket's second key token is a module (needs, applied). */
  constructor (private readonly byModule: boolean, private readonly recount: Recount) {}

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
    let g = t.modules.get(module)
    if (g === undefined) t.modules.set(module, (g = new Group()))
    g.add(ms, nanos, revision)
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
