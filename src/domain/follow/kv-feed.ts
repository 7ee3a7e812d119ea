// A bucket's changes read from an ordered push consumer of our own, not through `kv.watch`: each
// message becomes a KvChange read straight off its subject, reply subject and (when it has them)
// headers, without nats.js's JsMsg, its reply-subject split, KvEntry or async iterator, which the
// load of a large bucket paid per entry. It does what nats.js's ordered consumer does: flow control
// answered, heartbeats watched, and the consumer created again after the last stream sequence seen
// when the server lost it, skipped a delivery or went quiet. Its snapshot ends at the stream's last
// sequence read before the consumer was made, never at a num_pending: nats-server 2.9.10 reports
// more pending than an unfiltered consumer of a history-1 bucket will ever deliver (docs/architecture.md#what-nats-does-here).

import { AckPolicy, createInbox, DeliverPolicy, nanos, nuid, ReplayPolicy, type ConsumerConfig, type JetStreamManager, type Msg, type NatsConnection, type Subscription } from 'nats'
import { arrivedBytes, operationOf, readDelivery, readStatus, type Delivery } from './nats-fence.js'
import type { KvChange } from '../store/contents.js'

const utf8 = new TextDecoder()

/**
 * A change as it arrived: its key is the bytes of its subject, and made a string only when first
 * read. A load applies most keys as those bytes (Contents.apply): the decode, the shape's regular
 * expression and the string's write into the key table were ~0.75 s of applying a 3M-key load
 * (bench/RESULTS.md, a load without a string a key). The bytes are a view of the read buffer they
 * came in, which nothing writes again.
 */
export class ArrivedChange implements KvChange {
  private named: string | undefined

  constructor (
    readonly keyBytes: Uint8Array,
    readonly revision: number,
    readonly operation: KvChange['operation'],
    readonly value: Uint8Array,
    readonly created: Date,
    readonly nanos: number
  ) {}

  get key (): string {
    this.named ??= utf8.decode(this.keyBytes)
    return this.named
  }
}

export interface KvFeedOptions {
  nc: NatsConnection
  jsm: JetStreamManager
  bucket: string
  /**
   * The connection's inbox prefix (nats.js's `_INBOX` when absent): the feed's inboxes use it, since
   * the service's NATS user may subscribe to its own replies only (deploy/accounts.conf).
   */
  inboxPrefix?: string | undefined
  /** The revision to start from; without it, the bucket's last value of every key (what `kv.watch` reads first). */
  from?: number | undefined
  /**
   * The bucket keeps one value per key (history 1): then its stream read whole is the last value of
   * every key, which the server starts sending at once, where it first works out the last message
   * of every key (~0.5 s at 300k keys on nats-server 2.9).
   */
  onePerKey?: boolean
  /** Each change, in revision order. */
  onChange: (change: KvChange) => void
  /**
   * The stream's last sequence, read (stream info) before the feed starts; 0 when it holds no
   * message. The feed is initialized once it has delivered that far.
   */
  endsAt: number
  /** Once, right after the last change the stream held when the feed started (at once for none). */
  onInitialized: () => void
  /** Told each time the consumer is created again, and why. */
  onRecreate?: (why: string, from: number) => void
  /** The consumer's idle heartbeat (ms); two intervals without a message and it is created again. */
  heartbeatMs?: number | undefined
}

/**
 * One bucket read from a consumer of our own until `stop`, the connection's close, or a consumer
 * that cannot be created again; `ended` then resolves, with the error if there was one.
 */
export class KvFeed {
  /** Resolves once the feed has ended: undefined after `stop` or a closed connection, the error otherwise. */
  readonly ended: Promise<Error | undefined>
  private readonly opts: KvFeedOptions
  private readonly stream: string
  private readonly prefixLength: number
  private readonly heartbeatMs: number
  private readonly delivery: Delivery = { streamSeq: 0, consumerSeq: 0, ms: 0, nanos: 0, pending: 0 }
  private sub: Subscription | undefined
  private lastStreamSeq: number
  private lastConsumerSeq = 0
  private initialized = false
  private done = false
  private end!: (err?: Error) => void
  /** Bumped by every message; the heartbeat check compares it with what it saw the last time. */
  private activity = 0
  private timer: ReturnType<typeof setInterval> | undefined

  constructor (opts: KvFeedOptions) {
    this.opts = opts
    this.stream = `KV_${opts.bucket}`
    this.prefixLength = `$KV.${opts.bucket}.`.length
    this.heartbeatMs = opts.heartbeatMs ?? 5000
    this.lastStreamSeq = (opts.from ?? 1) - 1
    this.ended = new Promise((resolve) => {
      this.end = (err) => {
        if (this.done) return
        this.done = true
        clearInterval(this.timer)
        this.sub?.unsubscribe()
        resolve(err)
      }
    })
  }

  /** Creates the consumer; rejects (and the feed is ended) when it cannot. */
  async start (): Promise<void> {
    try {
      await this.create(this.opts.from)
    } catch (err) {
      this.end(err as Error)
      throw err
    }
    if (this.done) return
    let seen = this.activity
    let missed = 0
    this.timer = setInterval(() => {
      missed = this.activity === seen ? missed + 1 : 0
      seen = this.activity
      if (missed >= 2) {
        missed = 0
        this.recreate('no message or heartbeat for two heartbeat intervals')
      }
    }, this.heartbeatMs)
  }

  stop (): void {
    this.end()
  }

  /**
   * Subscribes a new inbox and creates a consumer delivering to it, from `from` (or the last value
   * of every key); the messages of an earlier consumer, on its own inbox, are no longer read.
   */
  private async create (from: number | undefined): Promise<void> {
    this.sub?.unsubscribe()
    const inbox = createInbox(this.opts.inboxPrefix)
    this.lastConsumerSeq = 0
    const sub = this.opts.nc.subscribe(inbox, {
      callback: (err, msg) => {
        if (sub !== this.sub || this.done) return
        if (err !== null) this.end(err)
        else this.take(msg)
      }
    })
    this.sub = sub
    void sub.closed.then(() => { if (sub === this.sub) this.end() })
    // Read whole, no filter: a KV stream holds its bucket's subjects only, and with a filter
    // nats-server 2.9 first counts the filter's matches (~0.3 s at 300k keys) before it delivers
    // anything. The last value of each key needs one.
    const whole = from !== undefined || this.opts.onePerKey === true
    const config: Partial<ConsumerConfig> = {
      name: nuid.next(),
      deliver_subject: inbox,
      ack_policy: AckPolicy.None,
      max_deliver: 1,
      flow_control: true,
      idle_heartbeat: nanos(this.heartbeatMs),
      ack_wait: nanos(22 * 60 * 60 * 1000),
      mem_storage: true,
      num_replicas: 1,
      replay_policy: ReplayPolicy.Instant,
      ...(from !== undefined
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from }
        : { deliver_policy: whole ? DeliverPolicy.All : DeliverPolicy.LastPerSubject }),
      ...(whole ? {} : { filter_subject: `$KV.${this.opts.bucket}.>` })
    }
    await this.opts.jsm.consumers.add(this.stream, config)
    // Everything the stream held may be here already, or have been nothing.
    if (sub === this.sub) this.initializeAt(this.lastStreamSeq)
  }

  /** Creates the consumer again after the last message taken; ends the feed when that fails. */
  private recreate (why: string): void {
    if (this.done) return
    const from = this.lastStreamSeq + 1
    this.opts.onRecreate?.(why, from)
    this.create(from).catch((err: Error) => { this.end(err) })
  }

  /** Initialized once the feed has delivered as far as the stream reached when it started. */
  private initializeAt (streamSeq: number): void {
    if (streamSeq >= this.opts.endsAt) this.initialize()
  }

  private initialize (): void {
    if (this.initialized) return
    this.initialized = true
    this.opts.onInitialized()
  }

  private take (msg: Msg): void {
    this.activity++
    const d = this.delivery
    const raw = arrivedBytes(msg)
    if (!readDelivery(raw.reply, d)) {
      this.status(msg)
      return
    }
    if (d.consumerSeq !== this.lastConsumerSeq + 1) {
      this.recreate(`delivery ${d.consumerSeq} came after ${this.lastConsumerSeq}`)
      return
    }
    this.lastConsumerSeq = d.consumerSeq
    this.lastStreamSeq = d.streamSeq
    try {
      this.opts.onChange(new ArrivedChange(raw.subject.subarray(this.prefixLength), d.streamSeq, operationOf(msg), msg.data, new Date(d.ms), d.nanos))
      // A change may end the feed (a purge that has it read again): then it is not initialized.
      if (!this.done) this.initializeAt(d.streamSeq)
    } catch (err) {
      this.end(err as Error)
    }
  }

  /** A status message: flow control asks for an answer, a heartbeat says what was delivered last. */
  private status (msg: Msg): void {
    const status = readStatus(msg)
    if (status === undefined) return
    if (status.type === 'flow-control') {
      msg.respond()
      return
    }
    // A heartbeat of a consumer held back by flow control names where to answer so that it goes on.
    if (status.stalled !== '') this.opts.nc.publish(status.stalled)
    if (status.lastConsumerSeq !== this.lastConsumerSeq) {
      this.recreate(`the server delivered up to ${status.lastConsumerSeq}, this feed took ${this.lastConsumerSeq}`)
      return
    }
    // An idle consumer, not held back, has nothing more: the message at `endsAt` was removed
    // (a purge, or deletes by hand) before it was delivered, and no later one will say so.
    if (status.stalled === '') this.initialize()
  }
}
