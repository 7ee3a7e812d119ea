// What answers a client has not read may hold (docs/http.md "Bounds"): every answer handed to Node
// is counted, by its length, until its response closes (HTTP/1.1: the kernel took its last byte;
// HTTP/2: its stream ended, which a closed flow-control window holds back), per connection and in
// all. A client that asks and never reads (HTTP/1.1 pipelining, HTTP/2 streams on closed windows)
// would otherwise hold every answer it asked for, for good. Past a bound a connection is cut: one
// that holds more than a connection may, or, when all together hold more than the bound in all,
// the one holding the most. A stop cuts what is still unsent a moment later, so that no unread
// answer holds it up.

import type { Socket } from 'node:net'
import type { Http2ServerRequest } from 'node:http2'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

/** What one connection may hold unsent, and all of them: at least this, and never less than a few of the largest answers. */
export const PER_CONNECTION_BYTES = 8 * 1024 * 1024
const TOTAL_BYTES = 64 * 1024 * 1024
/** How many of the largest answers each bound takes at least (a bus max payload above 2 MiB raises them). */
const ANSWERS_PER_CONNECTION = 4
const ANSWERS_IN_ALL = 32
/** How long a stop lets unsent answers go out before their connections are cut (ms). */
const STOP_GRACE_MS = 500

/** An HTTP/1.1 socket or an HTTP/2 session: it says 'close' once, and whether it is destroyed. */
type ConnectionKey = NodeJS.EventEmitter & { readonly destroyed: boolean }

/** What one connection holds unsent, and how to cut it. */
interface Connection {
  bytes: number
  /** Its answers not yet sent whole. */
  answers: number
  readonly cut: () => void
  cutDone: boolean
}

export interface UnsentBounds {
  perConnection: number
  total: number
}

/** The bounds for answers of at most `maxAnswerBytes`. */
export function unsentBounds (maxAnswerBytes: number): UnsentBounds {
  return {
    perConnection: Math.max(PER_CONNECTION_BYTES, ANSWERS_PER_CONNECTION * maxAnswerBytes),
    total: Math.max(TOTAL_BYTES, ANSWERS_IN_ALL * maxAnswerBytes)
  }
}

export class Unsent {
  /** Bounded by the open connections: each one's account goes when it closes. */
  private readonly connections = new Map<ConnectionKey, Connection>()
  private held = 0

  constructor (
    private readonly bounds: () => UnsentBounds,
    /** Told of each connection cut, with what it held. */
    private readonly onCut: (why: 'connection' | 'total', bytes: number) => void
  ) {}

  /** The bytes of answers handed to Node and not yet sent whole, in all. */
  get bytes (): number {
    return this.held
  }

  /** Whether the connection `key` was cut: its requests still waiting for an answer get none. */
  isCut (key: ConnectionKey): boolean {
    return this.connections.get(key)?.cutDone === true
  }

  /**
   * Counts `bytes` of an answer on connection `key` until `response` closes; cuts past a bound.
   * A connection's account is kept until the connection closes, not dropped whenever its answers
   * are all sent: a keep-alive connection would otherwise make and drop one at every request.
   */
  add (key: ConnectionKey, cut: () => void, response: NodeJS.EventEmitter, bytes: number): void {
    // Gone before its answer: the answer is dropped, not held, and a closed connection would never
    // say 'close' again to let its account go.
    if (key.destroyed) return
    let connection = this.connections.get(key)
    if (connection === undefined) {
      this.connections.set(key, (connection = { bytes: 0, answers: 0, cut, cutDone: false }))
      key.once('close', () => { this.connections.delete(key) })
    }
    connection.bytes += bytes
    connection.answers++
    this.held += bytes
    const taken = connection
    // `on`, not `once`: a response closes once and is dropped with its listener, so once's
    // wrapper and its removal would be work at every answer for nothing.
    response.on('close', () => { this.release(taken, bytes) })
    const bounds = this.bounds()
    // One answer alone is never cut for its size: the answer size bound holds it.
    if (connection.bytes > bounds.perConnection && connection.answers > 1) this.cutOff(connection, 'connection')
    while (this.held > bounds.total) {
      let most: Connection | undefined
      for (const c of this.connections.values()) if (!c.cutDone && (most === undefined || c.bytes > most.bytes)) most = c
      if (most === undefined) break
      this.cutOff(most, 'total')
    }
  }

  /** Cuts every connection still holding unsent answers (a stop, after its grace). */
  cutAll (): void {
    for (const connection of this.connections.values()) if (!connection.cutDone && connection.answers > 0) this.cutOff(connection, 'connection')
  }

  private cutOff (connection: Connection, why: 'connection' | 'total'): void {
    connection.cutDone = true
    this.onCut(why, connection.bytes)
    // Its responses close with it, and release what they held.
    connection.cut()
  }

  private release (connection: Connection, bytes: number): void {
    connection.bytes -= bytes
    connection.answers--
    this.held -= bytes
  }
}

/** The connection a request came on, and how to cut it. */
function connectionOf (request: FastifyRequest): { key: ConnectionKey, cut: () => void } {
  const raw = request.raw as FastifyRequest['raw'] | Http2ServerRequest
  if ('stream' in raw) {
    const session = raw.stream.session
    if (session !== undefined) return { key: session, cut: () => { session.destroy() } }
  }
  const socket = raw.socket as Socket
  return { key: socket, cut: () => { socket.destroy() } }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The bytes of answers handed to Node and not yet sent whole (what unsent.ts bounds). */
    unsentBytes: () => number
  }
}

export interface UnsentDeps {
  maxAnswerBytes: () => number
  log: { warn: (obj: object, msg: string) => void }
}

/**
 * Counts every answer sent until it is sent whole, cuts past the bounds, skips the requests of a
 * connection already cut (their answers would only be built to be dropped), and cuts, a moment
 * into a stop, what is still unsent.
 */
export const unsent = fp<UnsentDeps>(async (app: FastifyInstance, deps) => {
  const accounts = new Unsent(() => unsentBounds(deps.maxAnswerBytes()), (why, bytes) => {
    deps.log.warn({ why, bytes }, why === 'connection'
      ? 'a connection held more unsent answers than it may (its client asks without reading); it is cut'
      : 'the connections held more unsent answers than all of them may; the one holding the most is cut')
  })
  app.decorate('unsentBytes', () => accounts.bytes)
  app.addHook('preHandler', (request, reply: FastifyReply, done) => {
    const connection = connectionOf(request)
    if (connection.key.destroyed || accounts.isCut(connection.key)) {
      reply.hijack()
      return
    }
    done()
  })
  app.addHook('onSend', (request, reply, payload, done) => {
    const bytes = typeof payload === 'string' || Buffer.isBuffer(payload) ? payload.length : 0
    if (bytes > 0) {
      const { key, cut } = connectionOf(request)
      accounts.add(key, cut, reply.raw, bytes)
    }
    done(null, payload)
  })
  let stopping: NodeJS.Timeout | undefined
  app.addHook('preClose', (done) => {
    // Answers in flight (the waits a stop answers among them) have a moment to go out; an answer
    // whose reader is not taking it holds the stop no longer than that.
    stopping = setInterval(() => { accounts.cutAll() }, STOP_GRACE_MS)
    done()
  })
  app.addHook('onClose', (_app, done) => {
    clearInterval(stopping)
    done()
  })
}, { name: 'unsent', fastify: '5.x' })
