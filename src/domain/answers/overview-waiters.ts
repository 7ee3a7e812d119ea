// The held waits on the nodes and modules documents (`wait` with If-None-Match, docs/following-changes.md):
// grouped by request and indexed by the nodes they name, so that a burst of writes is looked at
// once for them all, and woken only when a row they show, or showed, changed its bytes. A write
// that moves no row of theirs (an applied entry rewritten under `?state=pending`) wakes nobody.

import { heldUntil } from './held.js'
import type { OverviewRequest } from '../wire/request.js'
import type { AnsweredViews } from './port.js'
import { bucketsOf, keeps, readMesh } from './mesh.js'
import type { Before, Mesh, ModuleLine, Rows } from './rows.js'

interface Group {
  readonly request: OverviewRequest
  readonly wakes: Set<() => void>
}

const WATCHED = ['needs', 'applied', 'collect', 'registry'] as const

/** Whether a module row is one `request` keeps. */
const keepsLine = (request: OverviewRequest, line: ModuleLine | undefined): boolean =>
  line !== undefined && keeps(request.filter, 'module', line.module) && keeps(request.filter, 'state', line.state)

/** Whether the rows of `node` that `request` shows moved from `before` to now. */
function moved (rows: Rows, mesh: Mesh, request: OverviewRequest, node: string, before: Before): boolean {
  if (request.what === 'nodes') return before.node?.json !== rows.nodeRow(mesh, node)?.json
  const now = rows.moduleLines(mesh, node)
  const old = new Map((before.modules ?? []).map((l) => [l.module, l]))
  for (const line of now) {
    const was = old.get(line.module)
    old.delete(line.module)
    if (was?.json !== line.json && (keepsLine(request, was) || keepsLine(request, line))) return true
  }
  // Rows gone: moved when the answer kept them. Rows not kept before a change named the node may have been anything.
  for (const was of old.values()) if (keepsLine(request, was)) return true
  return before.modules === undefined && now.some((l) => keepsLine(request, l))
}

export class OverviewWaiters {
  /** By the request's text: a thousand consoles holding one URL are looked at once. */
  private readonly groups = new Map<string, Group>()
  /** The groups whose request names nodes, by each node it names: a write elsewhere never looks at them. */
  private readonly byNode = new Map<string, Set<Group>>()
  /** The groups whose request names no node: any write may move their rows. */
  private readonly anyNode = new Set<Group>()
  private held = 0
  private looking = false
  private unlisten: Array<() => void> = []

  constructor (private readonly views: AnsweredViews, private readonly rows: Rows) {}

  /** As Overviews.changed. */
  async changed (request: OverviewRequest, ms: number, signal?: AbortSignal): Promise<void> {
    await heldUntil(ms, signal, (wake, held) => { held.push(this.add(request, wake)) })
  }

  private add (request: OverviewRequest, wake: () => void): () => void {
    if (this.held++ === 0) {
      this.rows.watch()
      // What changed before this wait is in the ETag it was compared with: only later changes count.
      this.drain()
      this.unlisten = WATCHED.map((what) => this.views.byWhat[what].listen((signal) => this.signal(signal)))
    }
    const key = JSON.stringify([request.what, request.filter])
    let group = this.groups.get(key)
    if (group === undefined) this.index((group = { request, wakes: new Set() }), key, true)
    group.wakes.add(wake)
    let gone = false
    return () => {
      if (gone) return
      gone = true
      group.wakes.delete(wake)
      if (group.wakes.size === 0) this.index(group, key, false)
      if (--this.held === 0) {
        for (const stop of this.unlisten) stop()
        this.unlisten = []
        this.rows.unwatch()
      }
    }
  }

  /** Puts `group` in the index (`held`), or takes it out with the sets it leaves empty. */
  private index (group: Group, key: string, held: boolean): void {
    if (held) this.groups.set(key, group)
    else this.groups.delete(key)
    const nodes = group.request.filter['node']
    if (nodes === undefined) {
      if (held) this.anyNode.add(group)
      else this.anyNode.delete(group)
      return
    }
    for (const node of nodes) {
      let set = this.byNode.get(node)
      if (held) {
        if (set === undefined) this.byNode.set(node, (set = new Set()))
        set.add(group)
        continue
      }
      set?.delete(group)
      if (set?.size === 0) this.byNode.delete(node)
    }
  }

  private signal (signal: 'change' | 'state'): void {
    if (signal === 'state') {
      this.wake(() => true)
      return
    }
    if (this.looking) return
    // One look per burst of changes, after the burst.
    this.looking = true
    setImmediate(() => {
      this.looking = false
      if (this.held > 0) this.look()
    })
  }

  /** The rows replaced since the last look, undefined when the mesh cannot be read (a refusal is news too). */
  private drain (): { mesh: Mesh, replaced: ReturnType<Rows['drain']> } | undefined {
    // Without collect the modules' rows still read: only the nodes' refuse.
    for (const what of ['nodes', 'modules'] as const) {
      try {
        const mesh = readMesh(this.views, bucketsOf({ what, filter: {} }))
        return { mesh, replaced: this.rows.drain(mesh) }
      } catch {}
    }
    return undefined
  }

  private look (): void {
    const drained = this.drain()
    if (drained === undefined || drained.replaced.all) {
      this.wake(() => true)
      return
    }
    const { mesh, replaced } = drained
    const woken = new Set<Group>()
    for (const [node, before] of replaced.nodes) {
      for (const groups of [this.anyNode, this.byNode.get(node)]) {
        for (const group of groups ?? []) if (!woken.has(group) && moved(this.rows, mesh, group.request, node, before)) woken.add(group)
      }
    }
    this.wakeGroups(woken)
  }

  /** Wakes every wait of each group whose request `woken` says moved. */
  private wake (woken: (request: OverviewRequest) => boolean): void {
    this.wakeGroups([...this.groups.values()].filter((group) => woken(group.request)))
  }

  private wakeGroups (groups: Iterable<Group>): void {
    const wakes: Array<() => void> = []
    for (const group of groups) wakes.push(...group.wakes)
    for (const wake of wakes) wake()
  }
}
