// One bucket's contents held in memory, fed by a KV watch (deletes included), with the indexes
// that let a narrowed question cost what it returns. It loads, resumes after a reconnect from the
// last revision it saw, and waits for a bucket that does not exist yet. Once live it never goes
// back to refusing for a doubt: while it reloads, or while a cluster in the middle of an election
// says the stream is not there, it answers from what it holds and says stale.

import type { JetStreamClient, JetStreamManager, KV, KvEntry, QueuedIterator } from 'nats'
import { BUCKETS, fieldsOf, parseKey, type What } from './buckets.js'
import { ChangeLog } from './change-log.js'
import { generationOf } from './cursor.js'
import { holdValue, outOfShapeJson, StoredEntry } from './entry.js'
import { ProvisionerError } from './errors.js'
import { SortedKeys } from './sorted-keys.js'
import type { Logger } from './logger.js'
import type { ViewState, ViewStatus } from './schemas.js'

export interface OutOfShapeEntry {
  key: string
  tokens: string[]
  revision: number
  reason: string
  json: string
  bytes: number
}

/** Index positions per bucket: single fields, and node with module (collection) or, for needs, with kind. */
const INDEXES: Record<What, number[][]> = {
  registry: [[0]],
  needs: [[0], [1], [2], [0, 1], [0, 2]],
  applied: [[0], [1]],
  collect: [[0], [1], [2], [0, 1]]
}

const SEP = '\u0000'

/** An entry's value in one index: the field itself, or the fields joined (no array per entry for one). */
function indexValue (fields: readonly string[], positions: readonly number[]): string {
  return positions.length === 1 ? fields[positions[0] as number] as string : positions.map((p) => fields[p]).join(SEP)
}

/** One generation of a bucket's contents (a re-created bucket starts a new one). */
export class Contents {
  readonly entries = new Map<string, StoredEntry>()
  readonly outOfShape = new Map<string, OutOfShapeEntry>()
  /** Keys deleted or purged, with the revision of their deletion: kept for the generation, as their markers are in the bucket. */
  readonly deletions = new Map<string, number>()
  /** Every change in revision order: what `since` reads. */
  readonly log = new ChangeLog()
  revision = 0
  /** The last revision that put or deleted an out-of-shape key. */
  oddRevision = 0
  /** The generation as cursors name it (SPEC §8). */
  readonly generation: string
  /** Set when the snapshot is complete; until then only the maps are kept. */
  all: SortedKeys | undefined
  oddKeys = new SortedKeys()
  /** Keyed by the positions arrays of INDEXES themselves. */
  private readonly indexes = new Map<readonly number[], Map<string, SortedKeys>>()

  constructor (readonly what: What, readonly created: string) {
    this.generation = generationOf(created)
  }

  get indexed (): boolean {
    return this.all !== undefined
  }

  /** The revision of a key's latest change, whether it put or deleted it. */
  readonly current = (key: string): number | undefined =>
    this.entries.get(key)?.revision ?? this.outOfShape.get(key)?.revision ?? this.deletions.get(key)

  apply (e: KvEntry): void {
    const revision = e.revision
    if (revision <= this.revision) return
    this.revision = revision
    const key = e.key
    const put = e.operation === 'PUT'
    this.change(key, revision, put, e)
    if (put) this.deletions.delete(key)
    else this.deletions.set(key, revision)
    this.log.record(key, revision)
    this.log.compact(this.entries.size + this.outOfShape.size + this.deletions.size, this.current)
  }

  private change (key: string, revision: number, put: boolean, e: KvEntry): void {
    // A key's shape, fields and places in the indexes follow from the key alone: a key seen before
    // keeps them, and only a new or a removed key changes the indexes' members.
    const old = this.entries.get(key)
    if (old !== undefined) {
      if (put) {
        this.entries.set(key, new StoredEntry(this.what, key, revision, holdValue(e.value), e.created.getTime()))
        if (this.indexed) this.index(old.fields, revision)
      } else {
        this.entries.delete(key)
        if (this.indexed) this.index(old.fields, revision, (set) => set.delete(key))
      }
      return
    }
    const odd = this.outOfShape.get(key)
    if (odd !== undefined || !put) {
      // An out-of-shape key, or the deletion of a key this generation never held: no index holds it.
      this.changeOutOfShape(key, revision, put, odd?.reason)
      return
    }
    const parsed = parseKey(this.what, key)
    if (!parsed.ok) {
      this.changeOutOfShape(key, revision, put, parsed.reason)
      return
    }
    this.entries.set(key, new StoredEntry(this.what, key, revision, holdValue(e.value), e.created.getTime()))
    if (this.indexed) this.index(parsed.values, revision, (set) => set.add(key))
  }

  private changeOutOfShape (key: string, revision: number, put: boolean, reason: string | undefined): void {
    if (put) {
      const json = outOfShapeJson(key, revision, reason as string)
      if (!this.outOfShape.has(key) && this.indexed) this.oddKeys.add(key)
      this.outOfShape.set(key, { key, tokens: key.split('.'), revision, reason: reason as string, json, bytes: Buffer.byteLength(json) })
      this.oddRevision = revision
      return
    }
    if (this.outOfShape.delete(key)) {
      if (this.indexed) this.oddKeys.delete(key)
      this.oddRevision = revision
      return
    }
    // The deletion of a key never held: its fields, when it has them, say which answers it touches.
    const parsed = parseKey(this.what, key)
    if (!parsed.ok) this.oddRevision = revision
    else if (this.indexed) this.index(parsed.values, revision)
  }

  /** Marks the change of a key with `fields` in every set that holds it, and changes the sets' members. */
  private index (fields: readonly string[], revision: number, change?: (set: SortedKeys) => void): void {
    const all = this.all as SortedKeys
    if (change) change(all)
    all.revision = Math.max(all.revision, revision)
    for (const positions of INDEXES[this.what]) {
      const byValue = this.indexes.get(positions) as Map<string, SortedKeys>
      const value = indexValue(fields, positions)
      let set = byValue.get(value)
      // An emptied set stays: its revision is what an answer narrowed to it reflects.
      if (!set) byValue.set(value, (set = new SortedKeys()))
      if (change) change(set)
      set.revision = Math.max(set.revision, revision)
    }
  }

  /**
   * The last revision that changed what an answer narrowed by `filter` holds, conservatively: that
   * of the narrowest set holding every match, and of any out-of-shape key.
   */
  revisionFor (filter: ReadonlyMap<number, string>): number {
    if (filter.size === 0) return this.revision
    return Math.max(this.candidates(filter).set.revision, this.oddRevision)
  }

  /** Builds the sorted indexes once the snapshot is in: one sort, then every index fills in order. */
  buildIndexes (): void {
    const sorted = [...this.entries.keys()].sort()
    // Each key read once for all indexes: at 300k keys the load's last step is on the clock.
    const fields = sorted.map((key) => fieldsOf(this.what, key))
    for (const positions of INDEXES[this.what]) {
      const lists = new Map<string, string[]>()
      for (let i = 0; i < sorted.length; i++) {
        const key = sorted[i] as string
        const value = indexValue(fields[i] as string[], positions)
        const list = lists.get(value)
        if (list) list.push(key)
        else lists.set(value, [key])
      }
      const byValue = new Map<string, SortedKeys>()
      for (const [value, keys] of lists) {
        const set = new SortedKeys(keys)
        for (const key of keys) set.revision = Math.max(set.revision, (this.entries.get(key) as StoredEntry).revision)
        byValue.set(value, set)
      }
      this.indexes.set(positions, byValue)
    }
    this.oddKeys = new SortedKeys([...this.outOfShape.keys()].sort())
    this.all = new SortedKeys(sorted)
    this.all.revision = this.revision
    for (const [key, revision] of this.deletions) {
      const parsed = parseKey(this.what, key)
      // A deletion seen during the load marks the sets its key would be in.
      if (parsed.ok) this.index(parsed.values, revision)
    }
  }

  /**
   * The narrowest sorted set holding every entry that matches `filter` (decoded values by field
   * position), and whether every key in it matches (then no entry need be checked).
   */
  candidates (filter: ReadonlyMap<number, string>): { set: SortedKeys, exact: boolean } {
    let best: { set: SortedKeys, exact: boolean } = { set: this.all as SortedKeys, exact: filter.size === 0 }
    for (const positions of INDEXES[this.what]) {
      if (!positions.every((p) => filter.has(p))) continue
      const set = this.indexes.get(positions)?.get(positions.map((p) => filter.get(p)).join(SEP)) ?? new SortedKeys()
      const exact = positions.length === filter.size
      if (set.size < best.set.size || (set.size === best.set.size && exact)) best = { set, exact }
    }
    return best
  }
}

export interface ViewOptions {
  what: What
  js: JetStreamClient
  jsm: JetStreamManager
  log: Logger
  /** How often to look again for a missing bucket (ms). */
  retryMs?: number
  /** How often to check that a live bucket still exists and is the same one (ms). */
  checkMs?: number
}

function isNotFound (err: unknown): boolean {
  const e = err as { api_error?: { err_code?: number }, code?: string, message?: string }
  return e.api_error?.err_code === 10059 || e.code === '404' || /stream not found/i.test(e.message ?? '')
}

/** Why a complete generation cannot be resumed from the stream as it is now, if it cannot. */
function whyReload (c: Contents, created: string, lastSeq: number): string | undefined {
  if (c.created !== created) return 'was re-created'
  if (lastSeq < c.revision) return `ends at revision ${lastSeq}, before the ${c.revision} already seen`
  return undefined
}

/** How long a live view must find no stream before it calls its bucket gone; a loaded cluster's election takes seconds. */
const GONE_AFTER_MS = 3000

export class BucketView {
  readonly what: What
  readonly bucket: string
  private readonly js: JetStreamClient
  private readonly jsm: JetStreamManager
  private readonly log: Logger
  private readonly retryMs: number
  private readonly checkMs: number
  /** Set when looks find no bucket; cleared when one is found. */
  private absent = false
  /** The generation being followed. */
  private contents: Contents | undefined
  /** The generation answers come from: the last whose snapshot was complete. */
  private serving: Contents | undefined
  /** Since when looks have found no stream: a doubt at first, since a cluster electing a leader says so too. */
  private missingSince: number | undefined
  private connected = true
  private catchingUp = false
  /** True while the stream holds revisions that a look ago were already there and the view has not seen. */
  private lagging = false
  private lastLook: { streamLast: number, seen: number } | undefined
  private stopped = false
  private watch: QueuedIterator<KvEntry> | undefined
  private wake: (() => void) | undefined
  private running: Promise<void> | undefined
  private kv: KV | undefined

  constructor (opts: ViewOptions) {
    this.what = opts.what
    this.bucket = BUCKETS[opts.what]
    this.js = opts.js
    this.jsm = opts.jsm
    this.log = opts.log
    this.retryMs = opts.retryMs ?? 1000
    this.checkMs = opts.checkMs ?? 5000
  }

  start (): void {
    this.running ??= this.loop().catch((err) => this.log.error({ err, bucket: this.bucket }, 'view loop failed'))
  }

  async stop (): Promise<void> {
    this.stopped = true
    this.watch?.stop()
    this.wake?.()
    await this.running
  }

  /** Called on every change of the connection; on reconnect the watch resumes at once. */
  setConnected (connected: boolean): void {
    this.connected = connected
    if (connected) this.restart()
  }

  /** Ends the current watch so that the loop binds again and resumes from the last revision. */
  restart (): void {
    this.watch?.stop()
    this.wake?.()
  }

  /** Follows from what the view holds: answers come from `serving` exactly when it is live. */
  private get state (): ViewState {
    if (this.serving) return 'live'
    if (this.absent) return 'absent'
    return this.contents ? 'loading' : 'starting'
  }

  get stale (): boolean {
    return !this.connected || this.catchingUp || this.lagging || this.missingSince !== undefined || this.serving !== this.contents
  }

  status (): ViewStatus {
    const c = this.serving ?? this.contents
    return {
      bucket: this.bucket,
      state: this.state,
      stale: this.stale,
      revision: c?.revision ?? 0,
      keys: c?.entries.size ?? 0,
      outOfShape: c?.outOfShape.size ?? 0
    }
  }

  /** The contents to answer from, or the refusal that says why there are none. */
  read (): Contents {
    if (this.serving) return this.serving
    const c = this.contents
    if (this.state === 'absent') {
      const who = this.what === 'registry' ? "this service's registry writer (unless REGISTRY_CREATE_BUCKET=false)" : 'the provisioner clients'
      throw new ProvisionerError('BUCKET_MISSING', `bucket ${this.bucket} does not exist; ${who} create${this.what === 'registry' ? 's' : ''} it, and the service serves it as soon as it appears`)
    }
    throw new ProvisionerError('NOT_READY', `bucket ${this.bucket} is ${this.state === 'loading' ? `still loading (${c?.entries.size ?? 0} keys so far)` : 'not read yet'}; ask again shortly`)
  }

  private async pause (ms: number): Promise<void> {
    if (this.stopped) return
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms)
      this.wake = () => { clearTimeout(t); resolve() }
    })
    this.wake = undefined
  }

  private async loop (): Promise<void> {
    while (!this.stopped) {
      let created: string
      let lastSeq: number
      try {
        this.kv ??= await this.js.views.kv(this.bucket, { bindOnly: true })
        const info = await this.jsm.streams.info(`KV_${this.bucket}`)
        created = info.created
        lastSeq = info.state.last_seq
      } catch (err) {
        if (isNotFound(err)) this.notFound()
        else this.log.debug({ err, bucket: this.bucket }, 'bucket info failed; looking again')
        await this.pause(this.retryMs)
        continue
      }
      this.missingSince = undefined
      this.absent = false
      const c = this.contents
      const reload = c?.indexed === true ? whyReload(c, created, lastSeq) : undefined
      if (reload) this.log.warn({ bucket: this.bucket }, 'bucket %s; reloading it and answering from what was held, as stale, until the reload is complete', reload)
      const resume = c?.indexed === true && reload === undefined
      if (!resume) this.contents = new Contents(this.what, created)
      await this.follow(resume ? (c as Contents).revision + 1 : undefined)
      await this.pause(this.stopped ? 0 : 50)
    }
  }

  /** Follows the bucket until the watch ends (stop, restart, lost connection or bucket). */
  private async follow (from: number | undefined): Promise<void> {
    const contents = this.contents as Contents
    this.catchingUp = from !== undefined
    const ready = (): void => {
      if (!contents.indexed) contents.buildIndexes()
      this.serving = contents
      this.catchingUp = false
      this.log.info({ bucket: this.bucket, revision: contents.revision, keys: contents.entries.size, outOfShape: contents.outOfShape.size }, from === undefined ? 'view live' : 'view caught up')
    }
    let watch: QueuedIterator<KvEntry>
    try {
      watch = await (this.kv as KV).watch({ key: '>', initializedFn: ready, ...(from === undefined ? {} : { resumeFromRevision: from }) })
    } catch (err) {
      this.log.warn({ err, bucket: this.bucket }, 'watch could not start; trying again')
      await this.pause(this.retryMs)
      return
    }
    this.watch = watch
    if (this.stopped) watch.stop()
    this.lastLook = undefined
    this.lagging = false
    const check = setInterval(() => { void this.verify(contents) }, this.checkMs)
    try {
      for await (const e of watch) contents.apply(e)
    } catch (err) {
      if (!this.stopped) this.log.warn({ err, bucket: this.bucket }, 'watch ended with an error; binding again')
    } finally {
      clearInterval(check)
      this.watch = undefined
    }
  }

  private notFound (): void {
    if (this.serving !== undefined && this.missingSince === undefined) {
      this.log.warn({ bucket: this.bucket }, 'bucket not found; answering from what is held, as stale, until it is found again or has been missing %d ms', GONE_AFTER_MS)
    }
    this.missingSince ??= Date.now()
    if (this.serving === undefined || Date.now() - this.missingSince >= GONE_AFTER_MS) this.gone()
  }

  private gone (): void {
    if (!this.absent) this.log.warn({ bucket: this.bucket }, 'bucket does not exist; looking for it again every %d ms', this.retryMs)
    this.absent = true
    this.contents = this.serving = undefined
    this.missingSince = undefined
  }

  /**
   * A deleted or re-created bucket sends the watch nothing, and neither does a watch whose consumer
   * was lost with a cluster node: ask now and then, say stale while the stream holds revisions the
   * view has not seen at the next look, and start over when the view has not moved at all.
   */
  private async verify (contents: Contents): Promise<void> {
    try {
      const info = await this.jsm.streams.info(`KV_${this.bucket}`)
      if (info.created !== contents.created) return this.restart()
      const seen = contents.revision
      const last = this.lastLook
      this.lastLook = { streamLast: info.state.last_seq, seen }
      this.lagging = last !== undefined && seen < Math.min(last.streamLast, info.state.last_seq)
      if (this.lagging && seen === last?.seen) {
        this.log.warn({ bucket: this.bucket, revision: seen, streamRevision: info.state.last_seq }, 'the watch stopped delivering; following the bucket again')
        this.restart()
      }
    } catch (err) {
      if (isNotFound(err)) this.restart()
    }
  }
}
