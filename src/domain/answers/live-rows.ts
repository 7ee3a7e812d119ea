// The rows of the mesh at a glance, live (docs/glance.md): what an event stream of nodes or
// modules reads. Its cursor names the point of every bucket the rows read (and the registry,
// whose kinds `unanswered` reads); the rows that changed after a cursor are those of the nodes
// and modules the keys changed since name, so that a write costs the rows it touches, whatever
// the size of the mesh, and a stream resumed on any instance gets what it missed, latest per row.

import { hash } from 'node:crypto'
import { ProvisionerError } from '../wire/errors.js'
import type { OverviewRequest } from '../wire/request.js'
import type { Contents } from '../store/contents.js'
import { FIELDS, tokenOf, type What } from '../wire/key-shapes.js'
import { lastReadOf } from '../wire/cursor.js'
import type { AnsweredViews } from './port.js'
import { bucketsOf, keeps, readMesh } from './mesh.js'
import { namesModule, touched, type Mesh, type Rows } from './rows.js'
import type { KeyRead } from './selection.js'
import type { Following, Waiter, Waiters } from './waiters.js'

/** A row put (its JSON as in answers) or deleted (`{"node"}`, `{"node","module"}`). */
export interface RowChange { type: 'put' | 'delete', json: string }

const CURSOR = /^(\d{1,16}(?:\.\d{1,16}){2,3})-([A-Za-z0-9_-]{16})$/

/** The revisions a row cursor names, in cursor order, and its generations' digest; undefined for none. */
function readCursor (cursor: string): { revisions: number[], generations: string } | undefined {
  const m = CURSOR.exec(cursor)
  return m === null ? undefined : { revisions: (m[1] as string).split('.').map(Number), generations: m[2] as string }
}

/** The revisions a row cursor names, shared by every stream (lastReadOf); none for no cursor or another's. */
const revisionsOf = lastReadOf((cursor): readonly number[] => readCursor(cursor)?.revisions ?? [])

/**
 * Whether a change of `key` in bucket `what` names a row `request` keeps, read as `touched` reads
 * it: by its node and, for module rows, its module (`namesModule`).
 */
function namesKept (request: OverviewRequest, what: What, key: KeyRead): boolean {
  const tokens = 'values' in key ? key.values : key.tokens
  if (!keeps(request.filter, 'node', tokens[0] as string)) return false
  if (request.what === 'nodes') return true
  const module = namesModule(what) ? tokens[1] : undefined
  return module !== undefined && keeps(request.filter, 'module', module)
}

/** The buckets whose changes move rows of `request`, in cursor order: the registry last. */
const readBuckets = (request: OverviewRequest): Array<keyof Mesh & string> => [...bucketsOf(request), 'registry']

function expired (why: string): ProvisionerError {
  return new ProvisionerError('CURSOR_EXPIRED', why)
}

/** One row of `request`, by its sort key (`<node>` or `<node>.<module>`). */
interface Keyed { key: string, json: string }

export class LiveRows {
  /** What `state` named last: the states of the contents read, and the object naming them together. */
  private lastState: { parts: ReadonlyArray<object | undefined>, state: object } | undefined

  constructor (private readonly views: AnsweredViews, private readonly rows: Rows, private readonly waitersOf: (what: What) => Waiters) {}

  /** The cursor of `mesh` for `request`: each bucket's revision, and a digest of their generations. */
  private cursorOf (mesh: Mesh, request: OverviewRequest): string {
    const held = readBuckets(request).map((b) => mesh[b] as Contents | undefined)
    const generations = held.map((c) => c?.generation ?? '-').join(' ')
    return `${held.map((c) => c?.revision ?? 0).join('.')}-${hash('sha256', generations, 'base64url').slice(0, 16)}`
  }

  private mesh (request: OverviewRequest): Mesh {
    return readMesh(this.views, bucketsOf(request))
  }

  /** Every row `request` keeps now, in answer order. */
  private * all (mesh: Mesh, request: OverviewRequest): Generator<Keyed> {
    const { filter } = request
    const contents = request.what === 'nodes' ? [mesh.needs, mesh.applied, mesh.collect] : [mesh.needs, mesh.applied]
    for (const node of this.rows.nodes(...contents)) {
      if (!keeps(filter, 'node', node)) continue
      if (request.what === 'nodes') {
        const row = this.rows.nodeRow(mesh, node)
        if (row !== undefined) yield { key: node, json: row.json }
        continue
      }
      for (const m of this.rows.moduleLines(mesh, node)) {
        if (keeps(filter, 'module', m.module) && keeps(filter, 'state', m.state)) yield { key: `${node}.${m.module}`, json: m.json }
      }
    }
  }

  /** One page of the rows `request` keeps now, after the row `after` names, for a stream's snapshot; `cursor` names the state read. */
  snapshot (request: OverviewRequest, after: string | undefined, limit: number): { entries: string[], next?: string, cursor: string, stale: boolean } {
    const mesh = this.mesh(request)
    const entries: string[] = []
    let next: string | undefined
    for (const row of this.all(mesh, request)) {
      if (after !== undefined && !later(row.key, after)) continue
      if (entries.length === limit) break
      entries.push(row.json)
      next = row.key
    }
    const more = entries.length === limit && next !== undefined
    return { entries, ...(more ? { next } : {}), cursor: this.cursorOf(mesh, request), stale: mesh.stale }
  }

  /** How many rows `request` keeps now, and whether they are stale: what `synced` says. */
  count (request: OverviewRequest): { total: number, stale: boolean } {
    const mesh = this.mesh(request)
    return { total: [...this.all(mesh, request)].length, stale: mesh.stale }
  }

  /**
   * An object equal (===) only to itself while the contents `request`'s rows are read from hold what
   * they hold now (each one's `Contents.state`), so that what is read from them is shared while it
   * holds: a read again, or a refusal of more cursors, at the same revisions makes another. The last
   * one made is kept: the streams a write wakes ask it in turn.
   */
  state (request: OverviewRequest): object {
    const mesh = this.mesh(request)
    const parts = readBuckets(request).map((b) => (mesh[b] as Contents | undefined)?.state)
    const last = this.lastState
    if (last !== undefined && last.parts.length === parts.length && last.parts.every((part, i) => part === parts[i])) return last.state
    this.lastState = { parts, state: {} }
    return this.lastState.state
  }

  /**
   * Calls `wake` on every change after the cursor the stream last moved to (`position` at first)
   * that may move a row `request` keeps (a key naming a node, and for module rows a module, its
   * filter keeps), on every registry change (its kinds move `unanswered`) and on a change of a
   * view's state, until it stops: a write to another node costs the stream nothing.
   */
  follow (request: OverviewRequest, position: string | undefined, wake: () => void): Following {
    // No cursor, or not one of these rows: no revision, so every change is after it.
    const afterOf = (cursor: string | undefined): readonly number[] => cursor === undefined ? [] : revisionsOf(cursor)
    const nodes = request.filter['node']
    const buckets = bucketsOf(request)
    const waiters = buckets.map((what, i): Waiter => ({
      after: afterOf(position)[i] ?? 0,
      index: nodes === undefined ? undefined : { position: FIELDS[what].indexOf('node'), tokens: nodes.map((n) => tokenOf('node', n)) },
      keeps: (key) => namesKept(request, what, key),
      wake
    }))
    const stops = waiters.map((waiter, i) => this.waitersOf(buckets[i] as What).add(waiter))
    stops.push(this.views.byWhat.registry.listen(wake))
    return {
      moved: (cursor) => {
        const revisions = afterOf(cursor)
        waiters.forEach((waiter, i) => { waiter.after = revisions[i] ?? 0 })
      },
      stop: () => { for (const stop of stops) stop() }
    }
  }

  /**
   * The rows that changed or left after `since`, latest per row, in answer order: a put for each
   * row the filter keeps that a changed key names, a delete for each that it no longer keeps.
   * CURSOR_EXPIRED when `since` cannot be served (not such a cursor, a bucket created again, a
   * revision this instance has not reached or no longer serves).
   */
  changes (request: OverviewRequest, since: string): { changes: RowChange[], cursor: string } {
    const read = readCursor(since)
    const buckets = readBuckets(request)
    if (read === undefined || read.revisions.length !== buckets.length) throw expired(`${JSON.stringify(since.slice(0, 60))} is not an id of this stream; a fresh snapshot follows`)
    const { revisions } = read
    const mesh = this.mesh(request)
    const cursor = this.cursorOf(mesh, request)
    if (!cursor.endsWith(`-${read.generations}`)) throw expired('a bucket the rows read was created again since that id; a fresh snapshot follows')
    const named = new Map<string, { node: string, module: string | undefined }>()
    buckets.forEach((b, i) => {
      const c = mesh[b] as Contents | undefined
      const revision = revisions[i] as number
      if (c === undefined) return
      if (revision > c.revision || revision < c.expiredBefore) throw expired(`that id names revision ${revision} of bucket ${c.what}, which this instance does not serve (it holds ${c.expiredBefore}-${c.revision}); a fresh snapshot follows`)
      for (const t of touched(mesh, c, revision)) {
        if (!keeps(request.filter, 'node', t.node)) continue
        if (request.what === 'nodes') named.set(t.node, { node: t.node, module: undefined })
        else if (t.module !== undefined && keeps(request.filter, 'module', t.module)) named.set(`${t.node}.${t.module}`, t)
      }
    })
    const changes: RowChange[] = []
    for (const key of [...named.keys()].sort(byRow)) {
      const { node, module } = named.get(key) as { node: string, module: string | undefined }
      const json = module === undefined
        ? this.rows.nodeRow(mesh, node)?.json
        : this.rows.moduleLines(mesh, node).find((l) => l.module === module && keeps(request.filter, 'state', l.state))?.json
      changes.push(json !== undefined ? { type: 'put', json } : { type: 'delete', json: module === undefined ? `{"node":"${node}"}` : `{"node":"${node}","module":"${module}"}` })
    }
    return { changes, cursor }
  }
}

/** Rows in answer order: by node, then by module (a key's first dot parts them). */
function byRow (a: string, b: string): number {
  return later(a, b) ? 1 : a === b ? 0 : -1
}

/** Whether the row keyed `a` comes after the one keyed `b`. */
function later (a: string, b: string): boolean {
  const [an, am = ''] = split(a)
  const [bn, bm = ''] = split(b)
  return an > bn || (an === bn && am > bm)
}

function split (key: string): [string, string?] {
  const dot = key.indexOf('.')
  return dot < 0 ? [key] : [key.slice(0, dot), key.slice(dot + 1)]
}
