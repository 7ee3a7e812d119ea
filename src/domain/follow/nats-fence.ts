// The one place that reads what this service needs of NATS beyond nats.js's exported API: the
// fields nats.js (2.29) keeps but does not export, and the JetStream protocol the feed speaks itself
// (a delivery's reply subject, flow control and heartbeats, a KV message's operation, the API's
// error codes). test/nats-fence.test.ts holds each against a real nats-server, so that an upgrade
// of nats.js or of the server that moves one fails there, by name, rather than degrading quietly.

import type { Msg, Service } from 'nats'
import type { KvChange } from '../store/contents.js'

/** A message's subject and reply subject as the bytes they came in. */
export interface ArrivedBytes {
  subject: Uint8Array
  reply?: Uint8Array
}

/**
 * A message's subject and reply subject before nats.js decodes them to strings (its `MsgImpl`
 * keeps them in `_msg`). The feed reads them there per message: decoding every reply subject, and
 * a key cut from the decoded subject keeping the whole subject alive, cost a large bucket's load.
 */
export function arrivedBytes (msg: Msg): ArrivedBytes {
  return (msg as unknown as { _msg: ArrivedBytes })._msg
}

/**
 * Counts an error reply in an endpoint's own stats (`num_errors`, `last_error` in `$SRV.STATS`):
 * nats.js counts only errors thrown out of a handler, where nats.go counts every error reply it
 * sends (docs/verb.md). The stats are the service's `handlers[].stats`, found by the endpoint's name; a
 * nats.js that keeps them elsewhere fails here, at the start, rather than under-count quietly.
 */
export function endpointErrorCounter (service: Service, endpoint: string): (err: Error) => void {
  const endpoints = (service as unknown as { handlers?: Array<{ name?: string, stats?: { countError?: unknown } }> }).handlers
  const stats = endpoints?.find((e) => e.name === endpoint)?.stats
  const countError = stats?.countError
  if (typeof countError !== 'function') throw new Error(`nats.js keeps the stats of endpoint ${endpoint} where src/domain/follow/nats-fence.ts does not find them (\`handlers[].stats.countError\`); error replies would go uncounted`)
  return (err) => { countError.call(stats, err) }
}

/** What a JetStream delivery's reply subject says of it. */
export interface Delivery {
  /** The stream sequence: the KV revision. */
  streamSeq: number
  /** The consumer's own delivery sequence: a gap means a message was missed. */
  consumerSeq: number
  /** When the stream stored it, in ms since the epoch (the subject carries ns). */
  ms: number
  /** The ns within that ms: the modules' states compare at the precision NATS gives (docs/glance.md). */
  nanos: number
  /** How many messages the consumer still has for us after this one, as the server counts them (2.9.10 may count too many). */
  pending: number
}

/** `$JS.ACK.` as bytes. */
const ACK_PREFIX = [36, 74, 83, 46, 65, 67, 75, 46]
/** Where the dots of one reply subject are; a subject has 8 (before server 2.9's form) or 10-11. */
const dots = new Int32Array(12)

/** The number in `b` from `from` to `to`, digits only; -1 when there are none or something else. */
function digits (b: Uint8Array, from: number, to: number): number {
  if (from >= to) return -1
  let n = 0
  for (let i = from; i < to; i++) {
    const d = (b[i] as number) - 48
    if (d < 0 || d > 9) return -1
    n = n * 10 + d
  }
  return n
}

/**
 * Reads a delivery's reply subject, as the bytes it came in, into `into` (reused, so that a load
 * allocates nothing for it); false when it is not a delivery's. Both forms (ADR-15):
 * `$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts ns>.<pending>` and
 * `$JS.ACK.<domain>.<account hash>.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts ns>.<pending>[.<token>]`.
 */
export function readDelivery (reply: Uint8Array | undefined, into: Delivery): boolean {
  if (reply === undefined || reply.length < ACK_PREFIX.length) return false
  for (let i = 0; i < ACK_PREFIX.length; i++) if (reply[i] !== ACK_PREFIX[i]) return false
  let n = 0
  for (let i = ACK_PREFIX.length; i < reply.length; i++) {
    if (reply[i] !== 46) continue
    if (n === dots.length) return false
    dots[n++] = i
  }
  // The dot before <sseq>: the third after the prefix in the old form, the fifth in the new one.
  const b = n === 6 ? 2 : n === 8 || n === 9 ? 4 : -1
  if (b < 0) return false
  const seqAt = dots[b] as number
  const cseqAt = dots[b + 1] as number
  const tsAt = dots[b + 2] as number
  const pendingAt = dots[b + 3] as number
  const pendingTo = n > b + 4 ? dots[b + 4] as number : reply.length
  const streamSeq = digits(reply, seqAt + 1, cseqAt)
  const consumerSeq = digits(reply, cseqAt + 1, tsAt)
  const pending = digits(reply, pendingAt + 1, pendingTo)
  // ns to ms: the digits but the last six, read apart, so that the number stays exact.
  const msTo = Math.max(tsAt + 1, pendingAt - 6)
  const ms = msTo > tsAt + 1 ? digits(reply, tsAt + 1, msTo) : 0
  const nanos = digits(reply, msTo, pendingAt)
  if (streamSeq < 0 || consumerSeq < 0 || pending < 0 || ms < 0 || nanos < 0) return false
  into.streamSeq = streamSeq
  into.consumerSeq = consumerSeq
  into.ms = ms
  into.nanos = nanos
  into.pending = pending
  return true
}

/** The operation of a KV message: in its `KV-Operation` header, absent on a put. */
export function operationOf (msg: Msg): KvChange['operation'] {
  const op = msg.headers?.get('KV-Operation')
  return op === 'DEL' || op === 'PURGE' ? op : 'PUT'
}

/** What a status message (no reply subject of a delivery) asks of the feed. */
export type Status =
  /** Flow control: answer it, or the server stops delivering. */
  | { type: 'flow-control' }
  /**
   * An idle heartbeat: the last consumer sequence the server delivered, and (when flow control
   * holds the consumer back) the subject to publish to so that it goes on.
   */
  | { type: 'heartbeat', lastConsumerSeq: number, stalled: string }

/** Reads a status message of a push consumer (code 100); undefined for anything else. */
export function readStatus (msg: Msg): Status | undefined {
  const h = msg.headers
  if (h === undefined || h.code !== 100) return undefined
  if ((msg.reply ?? '') !== '') return { type: 'flow-control' }
  return { type: 'heartbeat', lastConsumerSeq: Number(h.get('Nats-Last-Consumer')), stalled: h.get('Nats-Consumer-Stalled') }
}

// The JetStream API errors the domain acts on, by the server's `err_code`. nats.js 2.29 names none
// of them (only its successor, @nats-io/jetstream, exports JetStreamApiCodes): the numbers are the
// server's own (nats-server jetstream_errors_generated.go) and stable across its versions.

/** JSStreamNotFoundErr: the bucket's stream does not exist (deleted, not created yet, or a cluster still electing its leader). */
const STREAM_NOT_FOUND = 10059
/** JSStreamWrongLastSequenceErr: a compare-and-set (create, update, delete with a revision) lost to another write. */
const STREAM_WRONG_LAST_SEQUENCE = 10071

function apiCode (err: unknown): number | undefined {
  return (err as { api_error?: { err_code?: number } } | undefined)?.api_error?.err_code
}

export function isStreamNotFound (err: unknown): boolean {
  return apiCode(err) === STREAM_NOT_FOUND
}

export function isWrongLastSequence (err: unknown): boolean {
  return apiCode(err) === STREAM_WRONG_LAST_SEQUENCE
}
