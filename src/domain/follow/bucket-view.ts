// One bucket's view: follows the bucket with a feed of its changes (deletes included; kv-feed.ts) into its Contents:
// loads it, resumes after a reconnect from the last revision seen, and waits for a bucket that does not exist yet. Once live
// it never goes back to refusing for a doubt: while it reloads, or while a cluster in the middle of
// an election says the stream is not there, it answers from what it holds and says stale. On a
// server that loses changes on a purge (server-defects.ts) it reads the bucket again after a purge
// that came after a gap (not applying it: what it skipped comes after every cursor given), and a
// read again that finds a loss below that, which no purge said, refuses the cursors before it. A key
// held before that the read again has not met is no loss while the stream holds a message of it
// (written again while the read went on, it is met later); only one with no message left refuses.

import type { JetStreamManager, NatsConnection } from 'nats'
import { BUCKETS, type What } from '../wire/key-shapes.js'
import { Contents } from '../store/contents.js'
import { ProvisionerError } from '../wire/errors.js'
import { isStreamNotFound } from './nats-fence.js'
import { KvFeed } from './kv-feed.js'
import { purgeDefect } from './server-defects.js'
import type { Logger } from '../logger.js'
import type { ViewState, ViewStatus } from '../wire/schemas.js'

export interface BucketViewOptions {
  what: What
  nc: NatsConnection
  jsm: JetStreamManager
  log: Logger
  /** The connection's inbox prefix, for the feed's inboxes. */
  inboxPrefix?: string | undefined
  /** How often to look again for a missing bucket (ms). */
  retryMs?: number
  /** How often to check that a live bucket still exists and is the same one (ms). */
  checkMs?: number
  /** The feed consumer's idle heartbeat (ms; KvFeedOptions.heartbeatMs). */
  heartbeatMs?: number
}

/** One feed, from its start to its end, and what the checks of it found: a check changes only its own. */
interface Follow {
  readonly contents: Contents
  feed: KvFeed | undefined
  /** Resumed from a revision and not yet through what the stream held then. */
  catchingUp: boolean
  /** The stream holds revisions that a check ago were already there and this feed has not delivered. */
  lagging: boolean
  lastCheck: { streamLast: number, seen: number } | undefined
  ended: boolean
  /** Why this generation must be read again, when a purge may have lost changes. */
  reread: string | undefined
  /**
   * The bucket keeps one message per key and none expires: caught up, the view holds as many keys
   * and markers as the stream holds messages. (In a bucket with a max age, every expiry would
   * differ, and a bucket of millions of keys would be read again at each.)
   */
  readonly counted: boolean
}

/** Why a complete generation cannot be resumed from the stream as it is now, if it cannot. */
function whyReload (c: Contents, created: string, lastSeq: number): string | undefined {
  if (c.created !== created) return 'was re-created'
  if (lastSeq < c.revision) return `ends at revision ${lastSeq}, before the ${c.revision} already seen`
  return undefined
}

const heldAt = (c: Contents, key: string): number | undefined => c.entries.revision(key) ?? c.outOfShape.get(key)?.revision

/** Whether `c` holds `key` or saw it deleted. */
const met = (c: Contents, key: string): boolean => heldAt(c, key) !== undefined || c.deletions.has(key)

/**
 * The revision of `old` after which `fresh`, read again from the same bucket, differs from it by
 * more than the changes `fresh` read after `old` ended: a key held at a revision `old` reached,
 * other than what `old` held, or a key `old` held that `fresh` saw deleted no later. 0 when `fresh`
 * only goes on from `old`. A key `old` held that `fresh` has not met is no loss yet (`unmetBy`).
 */
export function lostBy (old: Contents, fresh: Contents): number {
  const through = old.revision
  const keys = fresh.entries.keys
  for (let slot = 0; slot < keys.size; slot++) {
    if (!fresh.entries.holds(slot)) continue
    const key = keys.keyAt(slot)
    const revision = fresh.entries.revisionAt(slot)
    if (revision <= through && heldAt(old, key) !== revision) return through
  }
  for (const [key, { revision }] of fresh.outOfShape) if (revision <= through && heldAt(old, key) !== revision) return through
  const gone = (key: string, revision: number): boolean => {
    const now = heldAt(fresh, key) ?? fresh.deletions.get(key)
    return now !== undefined && now !== revision && now <= through
  }
  const oldKeys = old.entries.keys
  for (let slot = 0; slot < oldKeys.size; slot++) {
    if (old.entries.holds(slot) && gone(oldKeys.keyAt(slot), old.entries.revisionAt(slot))) return through
  }
  for (const [key, { revision }] of old.outOfShape) if (gone(key, revision)) return through
  return 0
}

/**
 * The keys `old` held that `fresh`, read again from the same bucket, neither holds nor saw deleted.
 * A read that passed a key's message before a write replaced it meets the key only at that write,
 * which may come after the read's end: the key is lost only if the stream holds no message of it
 * (its messages were removed from the stream, by hand or by a server that lost them).
 */
export function unmetBy (old: Contents, fresh: Contents): string[] {
  const out: string[] = []
  const oldKeys = old.entries.keys
  for (let slot = 0; slot < oldKeys.size; slot++) {
    if (old.entries.holds(slot) && !met(fresh, oldKeys.keyAt(slot))) out.push(oldKeys.keyAt(slot))
  }
  for (const key of old.outOfShape.keys()) if (!met(fresh, key)) out.push(key)
  return out
}

/**
 * Keys the contents before `contents` held that `contents`, a read again, has not yet met
 * (`unmetBy`). `through`: the last revision cursors of the contents before may name.
 */
interface Unmet {
  readonly contents: Contents
  readonly keys: Set<string>
  readonly through: number
}

/** The most keys yet to meet a check asks the stream about (one stream info each). */
const UNMET_ASKED = 16

/**
 * What a listener hears: `change` when a change reaches the contents answers come from, `state`
 * when the view's state or staleness moved, answers came from other contents (a read again serves
 * its own, in the same generation too), or cursors it gave were refused.
 */
export type ViewSignal = 'change' | 'state'

/** How long a live view must find no stream before it calls its bucket gone; a loaded cluster's election takes seconds. */
const GONE_AFTER_MS = 3000

export class BucketView {
  readonly what: What
  readonly bucket: string
  private readonly nc: NatsConnection
  private readonly jsm: JetStreamManager
  private readonly log: Logger
  private readonly inboxPrefix: string | undefined
  private readonly retryMs: number
  private readonly checkMs: number
  private readonly heartbeatMs: number | undefined
  /** Set when looks find no bucket; cleared when one is found. */
  private absent = false
  /** The last feed started, kept until the next starts; its contents are the generation followed. */
  private current: Follow | undefined
  /** The generation answers come from: the last whose snapshot was complete. */
  private serving: Contents | undefined
  /** Since when looks have found no stream: a doubt at first, since a cluster electing a leader says so too. */
  private missingSince: number | undefined
  private connected = true
  private stopped = false
  private wake: (() => void) | undefined
  private running: Promise<void> | undefined
  private readonly listeners = new Set<(signal: ViewSignal) => void>()
  /** The state and staleness last told to listeners, and the contents answers came from then. */
  private told = ''
  private toldServing: Contents | undefined
  /** The stream's last revision when a read last stopped short of it on a server that loses deliveries. */
  private shortOf: number | undefined
  /** Keys the serving contents are yet to meet, if a read again found any (`Unmet`). */
  private unmet: Unmet | undefined

  constructor (opts: BucketViewOptions) {
    this.what = opts.what
    this.bucket = BUCKETS[opts.what]
    this.nc = opts.nc
    this.jsm = opts.jsm
    this.log = opts.log
    this.inboxPrefix = opts.inboxPrefix
    this.retryMs = opts.retryMs ?? 1000
    this.checkMs = opts.checkMs ?? 5000
    this.heartbeatMs = opts.heartbeatMs
  }

  start (): void {
    this.running ??= this.loop().catch((err) => this.log.error({ err, bucket: this.bucket }, 'view loop failed'))
  }

  async stop (): Promise<void> {
    this.stopped = true
    this.restart()
    await this.running
  }

  /** Called on every change of the connection; on reconnect the feed resumes at once. */
  setConnected (connected: boolean): void {
    this.connected = connected
    this.signalState()
    if (connected) this.restart()
  }

  /** Calls `listener` on every signal until the returned function is called. */
  listen (listener: (signal: ViewSignal) => void): () => void {
    this.listeners.add(listener)
    return () => { this.listeners.delete(listener) }
  }

  private signal (signal: ViewSignal): void {
    for (const listener of this.listeners) listener(signal)
  }

  /**
   * Tells listeners when the state, staleness or serving contents differ from what they were last
   * told. A read again may complete before the feed's start returns, never told stale: the contents
   * answering are news even then, since what it found came by no `change`.
   */
  private signalState (): void {
    const now = `${this.state} ${this.stale}`
    if (now === this.told && this.serving === this.toldServing) return
    this.told = now
    this.toldServing = this.serving
    this.signal('state')
  }

  /** Ends the current feed so that the loop binds again and resumes from the last revision. */
  restart (): void {
    this.current?.feed?.stop()
    this.wake?.()
  }

  /** The generation being followed. */
  private get contents (): Contents | undefined {
    return this.current?.contents
  }

  /** Follows from what the view holds: answers come from `serving` exactly when it is live. */
  private get state (): ViewState {
    if (this.serving) return 'live'
    if (this.absent) return 'absent'
    return this.contents ? 'loading' : 'starting'
  }

  get stale (): boolean {
    const follow = this.current
    return !this.connected || this.missingSince !== undefined || this.serving !== follow?.contents ||
      follow?.catchingUp === true || follow?.lagging === true
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
    if (this.state === 'absent') {
      const who = this.what === 'registry' ? "this service's registry writer (unless REGISTRY_CREATE_BUCKET=false)" : 'the provisioner clients'
      throw new ProvisionerError('BUCKET_MISSING', `bucket ${this.bucket} does not exist; ${who} create${this.what === 'registry' ? 's' : ''} it, and the service serves it as soon as it appears`)
    }
    throw new ProvisionerError('NOT_READY', `bucket ${this.bucket} is ${this.state === 'loading' ? `still loading (${this.contents?.entries.size ?? 0} keys so far)` : 'not read yet'}; ask again shortly`)
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
      let endsAt: number
      let onePerKey: boolean
      let counted: boolean
      let messages: number
      try {
        const info = await this.jsm.streams.info(`KV_${this.bucket}`)
        created = info.created
        lastSeq = info.state.last_seq
        messages = info.state.messages
        endsAt = messages === 0 ? 0 : lastSeq
        onePerKey = info.config.max_msgs_per_subject === 1
        counted = onePerKey && info.config.max_age === 0
      } catch (err) {
        if (isStreamNotFound(err)) this.notFound()
        else this.log.debug({ err, bucket: this.bucket }, 'bucket info failed; looking again')
        await this.pause(this.retryMs)
        continue
      }
      this.missingSince = undefined
      this.absent = false
      this.signalState()
      const c = this.contents
      const reload = c?.indexed === true ? whyReload(c, created, lastSeq) ?? this.current?.reread : undefined
      if (reload) this.log.warn({ bucket: this.bucket }, 'bucket %s; reloading it and answering from what was held, as stale, until the reload is complete', reload)
      const resume = c?.indexed === true && reload === undefined
      // Sized for the load only where a message is a key or a marker: a bucket keeping history
      // holds several messages a key, and a table sized for them would hold that many empty cells.
      const fresh = (): Contents => onePerKey ? Contents.sized(this.what, created, messages) : new Contents(this.what, created)
      await this.follow(resume ? c : fresh(), resume ? c.revision + 1 : undefined, endsAt, onePerKey, counted)
      await this.pause(this.stopped ? 0 : 50)
    }
  }

  /** Follows the bucket until the feed ends (stop, restart, lost connection or bucket). */
  private async follow (contents: Contents, from: number | undefined, endsAt: number, onePerKey: boolean, counted: boolean): Promise<void> {
    const follow: Follow = { contents, feed: undefined, catchingUp: from !== undefined, lagging: false, lastCheck: undefined, ended: false, reread: undefined, counted }
    this.current = follow
    const feed = new KvFeed({
      nc: this.nc,
      jsm: this.jsm,
      bucket: this.bucket,
      inboxPrefix: this.inboxPrefix,
      from,
      onePerKey,
      onChange: (e) => {
        // A purge right after the change before it moved nothing past; after a gap it may have,
        // and then it is not applied: what it skipped comes after all these contents answered,
        // so the bucket read again brings it to every cursor they gave.
        if (e.operation === 'PURGE' && e.revision > endsAt && e.revision > contents.revision + 1 && this.readAgain(follow, (server) => `was purged at revision ${e.revision} on nats-server ${server}`)) return
        if (this.unmet?.contents === contents) this.met(e.key)
        contents.apply(e)
        if (contents === this.serving) this.signal('change')
      },
      endsAt,
      heartbeatMs: this.heartbeatMs,
      onInitialized: () => { this.ready(follow, from, endsAt) },
      onRecreate: (why, seq) => { this.log.info({ bucket: this.bucket, from: seq }, 'feed consumer created again: %s', why) }
    })
    follow.feed = feed
    try {
      await feed.start()
    } catch (err) {
      follow.ended = true
      this.log.warn({ err, bucket: this.bucket }, 'feed could not start; trying again')
      await this.pause(this.retryMs)
      return
    }
    if (this.stopped) feed.stop()
    this.signalState()
    const check = setInterval(() => { void this.verify(follow) }, this.checkMs)
    try {
      const err = await feed.ended
      if (err !== undefined && !this.stopped) this.log.warn({ err, bucket: this.bucket }, 'feed ended with an error; binding again')
    } finally {
      clearInterval(check)
      follow.ended = true
    }
  }

  /** The feed has delivered what the bucket held at its start: the contents serve from now on, or the bucket is read again. */
  private ready (follow: Follow, from: number | undefined, endsAt: number): void {
    const contents = follow.contents
    // A read that went idle before the revision the stream held at its start: on a server that
    // loses deliveries on a purge, one during the read may have moved it past the rest, so it is
    // read again; a read again that stops at the same place found messages removed, not skipped.
    const short = contents.revision < endsAt && this.shortOf !== endsAt
    this.shortOf = short ? endsAt : undefined
    if (short && this.readAgain(follow, (server) => `was read up to revision ${contents.revision} of the ${endsAt} it held on nats-server ${server}`)) return
    if (!contents.indexed) contents.buildIndexes()
    const old = this.serving
    if (old !== undefined && old !== contents && old.generation === contents.generation) {
      contents.expireBefore(old.expiredBefore, old.expiredBecause)
      const defect = purgeDefect(this.nc.info?.version)
      const known = defect === undefined ? '' : ` (nats-server ${defect.server} loses deliveries on a purge: see /readyz)`
      this.expire(contents, lostBy(old, contents), `read bucket ${this.bucket} again and found changes up to that revision that had not been delivered to it${known}`)
      this.unmet = this.meetLater(old, contents)
    } else if (old !== contents) {
      this.unmet = undefined
    }
    this.serving = contents
    follow.catchingUp = false
    this.signalState()
    this.log.info({ bucket: this.bucket, revision: contents.revision, keys: contents.entries.size, outOfShape: contents.outOfShape.size }, from === undefined ? 'view live' : 'view caught up')
  }

  /** Refuses the cursors of `contents` before `revision`, saying `why`, and says so in the log. */
  private expire (contents: Contents, revision: number, why: string): void {
    if (revision <= contents.expiredBefore) return
    contents.expireBefore(revision, why)
    this.log.warn({ bucket: this.bucket, revision }, 'this instance %s; cursors before revision %d are refused, so that pollers and event streams read it again', why, revision)
    // Held requests and streams at those cursors learn it now, not at the next change.
    if (contents === this.serving) this.signal('state')
  }

  /** The keys `old` held that `fresh` (to serve next) has not met, with those `old` itself had yet to meet. */
  private meetLater (old: Contents, fresh: Contents): Unmet | undefined {
    const before = this.unmet?.contents === old ? this.unmet : undefined
    const keys = new Set(unmetBy(old, fresh))
    for (const key of before?.keys ?? []) if (!met(fresh, key)) keys.add(key)
    return keys.size === 0 ? undefined : { contents: fresh, keys, through: Math.max(old.revision, before?.through ?? 0) }
  }

  private met (key: string): void {
    const unmet = this.unmet as Unmet
    unmet.keys.delete(key)
    if (unmet.keys.size === 0) this.unmet = undefined
  }

  /**
   * Asks the stream whether it still holds a message of each key `follow`'s contents have yet to
   * meet: one it holds none of is gone with no deletion a client could be told, so the cursors
   * given until now are refused.
   */
  private async settleUnmet (follow: Follow): Promise<void> {
    const unmet = this.unmet
    if (unmet?.contents !== follow.contents) return
    const gone: string[] = []
    for (const key of [...unmet.keys].slice(0, UNMET_ASKED)) {
      const subject = `$KV.${this.bucket}.${key}`
      const info = await this.jsm.streams.info(`KV_${this.bucket}`, { subjects_filter: subject })
      if (follow.ended || unmet !== this.unmet) return
      if (unmet.keys.has(key) && (info.state.subjects?.[subject] ?? 0) === 0) gone.push(key)
    }
    if (gone.length === 0) return
    for (const key of gone) this.met(key)
    const c = unmet.contents
    this.expire(c, Math.max(unmet.through, c.revision), `read bucket ${this.bucket} again and found ${gone.length} key${gone.length === 1 ? '' : 's'} it held gone with no deletion marker (${gone.slice(0, 3).join(', ')}${gone.length > 3 ? ', …' : ''}: messages removed from the stream), which a client may still hold`)
  }

  /** On a server that loses changes on a purge (nats-server#3838), ends the feed so that the loop reads the bucket again, saying `what` happened; true then. */
  private readAgain (follow: Follow, what: (server: string) => string): boolean {
    const defect = purgeDefect(this.nc.info?.version)
    if (defect === undefined) return false
    follow.reread = `${what(defect.server)}, which may have skipped changes (${defect.issue}, fixed in ${defect.fixedIn})`
    follow.feed?.stop()
    return true
  }

  /**
   * A bucket of one message per key, seen through its last revision, holds a message for each key
   * and marker the view holds: when the counts differ, the stream lost messages the feed had
   * delivered (removed by hand), or the feed skipped some that no purge it saw said (a
   * purged key written again before its marker was delivered, on a server that loses deliveries):
   * either way the bucket is read again, on every server.
   */
  private countsAgree (follow: Follow, streamLast: number, messages: number): boolean {
    const c = follow.contents
    if (!follow.counted || follow.catchingUp || c !== this.serving || c.revision !== streamLast) return true
    const held = c.entries.size + c.outOfShape.size + c.deletions.size
    if (held === messages) return true
    follow.reread = `holds ${messages} messages at revision ${streamLast} where the view holds ${held} keys and deletion markers`
    follow.feed?.stop()
    return false
  }

  private notFound (): void {
    if (this.serving !== undefined && this.missingSince === undefined) {
      this.log.warn({ bucket: this.bucket }, 'bucket not found; answering from what is held, as stale, until it is found again or has been missing %d ms', GONE_AFTER_MS)
    }
    this.missingSince ??= Date.now()
    if (this.serving === undefined || Date.now() - this.missingSince >= GONE_AFTER_MS) this.gone()
    this.signalState()
  }

  private gone (): void {
    if (!this.absent) this.log.warn({ bucket: this.bucket }, 'bucket does not exist; looking for it again every %d ms', this.retryMs)
    this.absent = true
    this.current = this.serving = this.unmet = undefined
    this.missingSince = undefined
  }

  /**
   * A deleted or re-created bucket sends the feed nothing, and neither does a feed whose consumer
   * was lost with a cluster node: ask now and then, say stale while the stream holds revisions the
   * view has not seen at the next check, and end the feed when the view has not moved at all.
   * A check acts on its own feed only: one that ended while the check was asking is left alone.
   */
  private async verify (follow: Follow): Promise<void> {
    let streamLast: number
    let messages: number
    let created: string
    try {
      const info = await this.jsm.streams.info(`KV_${this.bucket}`)
      streamLast = info.state.last_seq
      messages = info.state.messages
      created = info.created
    } catch (err) {
      if (follow.ended) return
      if (isStreamNotFound(err)) {
        follow.feed?.stop()
        return
      }
      // Cut off from NATS every check fails, and the connection's own log says why.
      this.log[this.connected ? 'warn' : 'debug']({ err, bucket: this.bucket }, 'checking the bucket failed; checking again in %d ms', this.checkMs)
      return
    }
    if (follow.ended) return
    if (created !== follow.contents.created) {
      follow.feed?.stop()
      return
    }
    if (!this.countsAgree(follow, streamLast, messages)) return
    await this.settleUnmet(follow).catch((err) => { this.log.debug({ err, bucket: this.bucket }, 'asking the stream for keys yet to meet failed; asking again at the next check') })
    if (follow.ended) return
    const seen = follow.contents.revision
    const last = follow.lastCheck
    follow.lastCheck = { streamLast, seen }
    follow.lagging = last !== undefined && seen < Math.min(last.streamLast, streamLast)
    this.signalState()
    if (follow.lagging && seen === last?.seen) {
      this.log.warn({ bucket: this.bucket, revision: seen, streamRevision: streamLast }, 'the feed stopped delivering; following the bucket again')
      follow.feed?.stop()
    }
  }
}
