// The requests held until a change they would show, and the event streams (a bucket's, the live
// rows') that follow one (docs/following-changes.md "`wait`", "Bounds"): indexed by the key
// token their filter asks at one field, so that a burst of changes is read once for them all and
// each change looks only at the waiters whose token it has. A write elsewhere costs a held request
// or a stream nothing, however many there are.

import type { Contents } from '../store/contents.js'
import type { ViewSignal } from '../follow/bucket-view.js'
import type { What } from '../wire/key-shapes.js'
import { readKey, type KeyRead } from './selection.js'

/** The view a Waiters follows: what bucket-view gives. */
export interface Followed {
  read: () => Contents
  listen: (listener: (signal: ViewSignal) => void) => () => void
}

export interface Waiter {
  /**
   * Changes after this revision wake it: a held request's stays, a stream's is moved as it sends
   * (Following). A number on the waiter itself: a look reads it for a thousand streams in turn, and
   * a getter's chain of closures cost ~1 µs a waiter there in a loaded service's heap.
   */
  after: number
  /** The tokens a key must have at `position` to be kept (an out-of-shape key without a token there may be); absent: any key may. */
  readonly index: { position: number, tokens: readonly string[] } | undefined
  /**
   * Whether the change of a key, read once for every waiter that looks at it, is one the waiter
   * would show. Waiters of one request may hold the same (SharedKeeps): a look asks it once a change
   * for each run of waiters holding it.
   */
  readonly keeps: (key: KeyRead) => boolean
  readonly wake: () => void
}

/** A stream's hold on the changes it follows: `moved` to each cursor it has sent, `stop` when it closes. */
export interface Following {
  moved: (cursor: string | undefined) => void
  stop: () => void
}

export class Waiters {
  private readonly any = new Set<Waiter>()
  /** By position, then by token: the waiters indexed there. */
  private readonly byToken = new Map<number, Map<string, Set<Waiter>>>()
  private held = 0
  /** The changes looked at so far: the next look reads those after. Set while any waiter is held. */
  private seen: { generation: string, revision: number } | undefined
  private looking = false
  private unlisten: (() => void) | undefined

  constructor (private readonly view: Followed) {}

  get size (): number {
    return this.held
  }

  /**
   * Holds `waiter` until the returned function lets it go: a held request's after its first wake,
   * an event stream's when it closes (it is woken again by every later change it keeps).
   */
  add (waiter: Waiter): () => void {
    if (this.held === 0) {
      this.seen = this.looksFrom()
      this.unlisten = this.view.listen((signal) => this.signal(signal))
    }
    this.held++
    for (const set of this.setsOf(waiter)) set.add(waiter)
    let gone = false
    return () => {
      if (gone) return
      gone = true
      this.remove(waiter)
      if (--this.held === 0) {
        this.unlisten?.()
        this.unlisten = this.seen = undefined
      }
    }
  }

  /** Where the looks start: the view as it is, or, while it cannot be read, nothing (its first look then finds another generation and wakes every waiter). */
  private looksFrom (): { generation: string, revision: number } {
    try {
      const contents = this.view.read()
      return { generation: contents.generation, revision: contents.revision }
    } catch {
      return { generation: '', revision: 0 }
    }
  }

  /** Takes `waiter` out of the index, and the sets it leaves empty with it: the index holds only what is held. */
  private remove (waiter: Waiter): void {
    if (waiter.index === undefined) {
      this.any.delete(waiter)
      return
    }
    const byToken = this.byToken.get(waiter.index.position)
    for (const token of waiter.index.tokens) {
      const set = byToken?.get(token)
      set?.delete(waiter)
      if (set?.size === 0) byToken?.delete(token)
    }
    if (byToken?.size === 0) this.byToken.delete(waiter.index.position)
  }

  private setsOf (waiter: Waiter): Array<Set<Waiter>> {
    if (waiter.index === undefined) return [this.any]
    let byToken = this.byToken.get(waiter.index.position)
    if (byToken === undefined) this.byToken.set(waiter.index.position, (byToken = new Map()))
    const sets: Array<Set<Waiter>> = []
    for (const token of waiter.index.tokens) {
      let set = byToken.get(token)
      if (set === undefined) byToken.set(token, (set = new Set()))
      sets.push(set)
    }
    return sets
  }

  private signal (signal: ViewSignal): void {
    if (signal === 'state') {
      this.wakeAll()
      return
    }
    if (this.looking) return
    // One look per burst of changes, after the burst: the changes one read of the connection
    // delivers are applied in one run of code, and the look follows it at once, so that a woken
    // stream's own wait for a burst (stream-of-request.ts) is the only turn a change waits.
    this.looking = true
    queueMicrotask(() => {
      this.looking = false
      this.look()
    })
  }

  private wakeAll (): void {
    for (const waiter of this.all()) waiter.wake()
  }

  private * all (): Generator<Waiter> {
    yield * [...this.any]
    for (const byToken of this.byToken.values()) for (const set of byToken.values()) yield * [...set]
  }

  /** Reads the changes since the last look once, and wakes the waiters that keep one. */
  private look (): void {
    const seen = this.seen
    if (seen === undefined) return
    let contents: Contents
    try {
      contents = this.view.read()
    } catch {
      this.wakeAll() // a refusal is news too: the request is asked again and answers it
      return
    }
    if (contents.generation !== seen.generation) {
      // Looks go on from the new generation: a waiter held past its wake is not woken by every change.
      this.seen = { generation: contents.generation, revision: contents.revision }
      this.wakeAll()
      return
    }
    const woken = new Set<Waiter>()
    for (const [key, revision] of contents.changesSince(seen.revision)) {
      const tokens = key.split('.')
      let read: KeyRead | undefined
      let lastKeeps: Waiter['keeps'] | undefined
      let kept = false
      // Plain loops over the sets: a put on a filter a thousand streams follow looks at each of them.
      for (const set of this.candidates(tokens)) {
        for (const waiter of set) {
          if (revision <= waiter.after || woken.has(waiter)) continue
          if (waiter.keeps !== lastKeeps) {
            lastKeeps = waiter.keeps
            kept = lastKeeps(read ??= readKey(contents.what, key, tokens))
          }
          if (kept) woken.add(waiter)
        }
      }
    }
    seen.revision = contents.revision
    for (const waiter of woken) waiter.wake()
  }

  /** The sets of waiters a key with `tokens` may wake: the unindexed, and those indexed by a token it has (or by any, where it has none). */
  private candidates (tokens: readonly string[]): Array<Set<Waiter>> {
    const sets = [this.any]
    for (const [position, byToken] of this.byToken) {
      const token = tokens[position]
      if (token !== undefined) {
        const set = byToken.get(token)
        if (set !== undefined) sets.push(set)
      } else {
        sets.push(...byToken.values())
      }
    }
    return sets
  }
}

/**
 * One `keeps` for the waiters of equal requests while any of them is held: the look then asks it
 * once a change for a thousand streams of one filter, where each asking its own was ~0.7 µs a
 * stream in a loaded service's heap (bench/RESULTS.md). At most one entry a waiter held.
 */
export class SharedKeeps {
  private readonly held = new Map<string, { keeps: Waiter['keeps'], holders: number }>()

  /** The keeps of requests named `key`, made by `make` unless one is held; held until `release`. */
  take (key: string, make: () => Waiter['keeps']): { keeps: Waiter['keeps'], release: () => void } {
    const found = this.held.get(key)
    const shared = found ?? { keeps: make(), holders: 0 }
    if (found === undefined) this.held.set(key, shared)
    shared.holders++
    let released = false
    return {
      keeps: shared.keeps,
      release: () => {
        if (released) return
        released = true
        if (--shared.holders === 0) this.held.delete(key)
      }
    }
  }

  get size (): number {
    return this.held.size
  }
}

/**
 * The waiters of each bucket, made when first asked for: a bucket's held requests, event streams
 * and live rows share one look per burst of its changes.
 */
export function waitersByBucket (views: { readonly byWhat: Readonly<Record<What, Followed>> }): (what: What) => Waiters {
  const waiters = new Map<What, Waiters>()
  return (what) => {
    let held = waiters.get(what)
    if (held === undefined) waiters.set(what, (held = new Waiters(views.byWhat[what])))
    return held
  }
}
