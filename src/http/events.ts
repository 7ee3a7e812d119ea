// The change feed of SPEC §8 as Server-Sent Events: `GET /v1/{what}/events?<filters>`. A stream
// holds no queue of its own: it remembers the last cursor it sent and, whenever the view signals,
// reads the changes after it from the domain, so a burst of writes costs it one read, and a reader
// that does not keep up is disconnected rather than buffered for (it resumes by its last id).

import type { ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { BUCKETS, WHATS, shapeOf, type What } from '../domain/wire/key-shapes.js'
import { formatCursor, parseCursor, type Cursor } from '../domain/wire/cursor.js'
import { badRequest, ProvisionerError } from '../domain/wire/errors.js'
import type { Provisioning } from '../domain/answers/provisioning.js'
import { readParameters, type Query } from '../domain/wire/request.js'
import { NARROWED_BY } from '../domain/wire/schemas.js'
import type { Views } from '../domain/follow/views.js'
import type { Metrics } from '../metrics.js'
import { replyError } from './errors.js'
import { judgedByTheDomain, parameterOf } from './schemas.js'
import { INTERNAL_EXAMPLE, refusal } from './examples.js'
import { callerOf, RETRY_AFTER_S, type Hold, type Pool } from './holds.js'

export interface EventsOptions {
  /** Open streams at most (HTTP_MAX_STREAMS, default 1000); beyond, 503 with Retry-After, shared fairly between callers (holds.ts). */
  maxStreams?: number
  /** How often an idle stream sends a comment line to keep proxies from closing it (ms). */
  heartbeatMs?: number
  /** How long a stream's unsent bytes may wait for its reader before the stream is ended (ms). */
  stallMs?: number
}

export interface EventsDeps extends Omit<EventsOptions, 'maxStreams'> {
  provisioning: Provisioning
  views: Views
  metrics: Metrics
  /** The open streams' pool (HTTP_MAX_STREAMS). */
  streams: Pool
}

/** The event types a stream sends, in the order the OpenAPI document describes them. */
export type EventType = 'put' | 'outOfShape' | 'synced' | 'delete' | 'stale' | 'live' | 'reset'

const HEARTBEAT_MS = 15_000
const STALL_MS = 30_000
/** What a browser waits before it reconnects (the `retry:` field). */
const RETRY_MS = 2000
/** How long an ended stream may take to close before it is cut (ms). */
const END_GRACE_MS = 1000
/** Entries per snapshot page and changes per read: the stream waits for its reader between them. */
const PAGE = 500

type Changes = ReturnType<Provisioning['changes']>

/**
 * What the streams of one gateway share: a put reaches a thousand streams of one filter, each
 * asking the same changes after the same cursor and sending them in the same words, so each is
 * read and framed once.
 */
class Fanout {
  /** The last event framed. */
  private framed: { type: EventType, data: string, id: string | undefined, text: string } | undefined
  /** The last changes read, by question and cursor, and the state of the view they were read from. */
  private read: { key: string, state: string, changes: Changes } | undefined

  /** One event as its lines; the data's line breaks become `data:` lines, which the reader joins with \n. */
  frame (type: EventType, data: string, id: string | undefined): string {
    if (this.framed?.data === data && this.framed.type === type && this.framed.id === id) return this.framed.text
    let text = id === undefined ? '' : `id: ${id}\n`
    text += `event: ${type}\n`
    for (const line of data.split(/\r\n|\r|\n/)) text += `data: ${line}\n`
    this.framed = { type, data, id, text: `${text}\n` }
    return this.framed.text
  }

  /** The changes `key` (a question and a cursor) names in view state `state`: read by `read` unless read already. */
  changes (key: string, state: string, read: () => Changes): Changes {
    if (this.read?.key !== key || this.read.state !== state) this.read = { key, state, changes: read() }
    return this.read.changes
  }
}

/** One open response: frames events and says whether its reader keeps up. */
class Sse {
  private ended = false
  /** Resolves when the response closes, whoever closed it. */
  readonly closed: Promise<void>

  /** `ownsConnection`: HTTP/1.1, where the stream is its connection's, which closes with it (an HTTP/2 stream shares its connection). */
  constructor (private readonly raw: ServerResponse, private readonly ownsConnection: boolean, private readonly stallMs: number, private readonly fanout: Fanout, private readonly counted: (type: string) => void) {
    this.closed = new Promise((resolve) => raw.once('close', resolve))
    // A write to a reader that went away fails here; its 'close' ends the stream.
    raw.on('error', () => {})
  }

  get open (): boolean {
    return !this.ended && !this.raw.destroyed && !this.raw.writableEnded
  }

  /** Writes one event; the data's line breaks become `data:` lines, which the reader joins with \n. */
  send (type: EventType, data: string, id?: string): void {
    if (!this.open) return
    this.raw.write(this.fanout.frame(type, data, id))
    this.counted(type)
  }

  write (text: string): void {
    if (this.open) this.raw.write(text)
  }

  /** A comment line, only when nothing is waiting to be sent: a stream with data in flight is alive. */
  heartbeat (): void {
    if (this.open && this.raw.writableLength === 0) this.raw.write(':\n\n')
  }

  /**
   * Resolves true when the next event may be written: at once while the socket takes what is
   * written, else once it drained. A reader that takes nothing for `stallMs` is disconnected, so a
   * stream holds at most one event beyond the socket's high-water mark.
   */
  async drained (): Promise<boolean> {
    if (!this.raw.writableNeedDrain) return this.open
    let timer: NodeJS.Timeout | undefined
    const drained = await Promise.race([
      new Promise<boolean>((resolve) => this.raw.once('drain', () => resolve(true))),
      this.closed.then(() => false),
      new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), this.stallMs) })
    ])
    clearTimeout(timer)
    if (!drained) this.end()
    return drained && this.open
  }

  /**
   * Ends the response and, over HTTP/1.1, its connection, which is never used again; one still
   * holding unsent bytes, or not closed a moment later, is cut, since its reader is not taking them
   * (over HTTP/2 only its stream is: the connection carries others).
   */
  end (): void {
    if (this.ended) return
    this.ended = true
    if (this.raw.writableLength > 0) {
      this.raw.destroy()
      return
    }
    const cut = setTimeout(() => this.raw.destroy(), END_GRACE_MS)
    void this.closed.then(() => clearTimeout(cut))
    this.raw.end(() => { if (this.ownsConnection) this.raw.socket?.destroy() })
  }
}

type State = { live: true } | { live: false, reason: string }

/** Follows `query` on one stream until the stream closes. */
class StreamOfQuestion {
  /** The cursor of the last change sent; undefined while a snapshot is due. */
  private position: Cursor | undefined
  /** Why the next snapshot is preceded by `reset`. */
  private resetReason: string | undefined
  /** Changes are being read up to now, after a snapshot or a resume: `synced` follows them. */
  private syncing = false
  /** The state last announced: undefined before the first look, which says only `stale`. */
  private announced: boolean | undefined
  private dirty = true
  /** Resolves the loop's wait for a change, while it waits. */
  private waiting: (() => void) | undefined
  /** The question followed, as text: streams asking the same share what they read. */
  private readonly asked: string

  constructor (private readonly deps: EventsDeps, private readonly fanout: Fanout, private readonly sse: Sse, private readonly query: Query, resume: string | undefined) {
    this.asked = `${JSON.stringify([query.what, query.filter])} `
    if (resume === undefined) return
    try {
      this.position = parseCursor(resume, 'Last-Event-ID')
      this.syncing = true
    } catch (err) {
      this.resetReason = (err as Error).message
    }
  }

  async run (): Promise<void> {
    const { provisioning } = this.deps
    const stop = provisioning.listen(this.query.what, () => this.wake())
    void this.sse.closed.then(() => this.wake())
    try {
      if (this.position !== undefined) await provisioning.catchUp({ ...this.query, since: this.position })
      while (this.sse.open) {
        this.dirty = false
        await this.step()
        if (!this.dirty && this.sse.open) {
          await new Promise<void>((resolve) => { this.waiting = resolve })
          // Lets a burst of changes land before they are read, so that it costs one read.
          await new Promise((resolve) => setImmediate(resolve))
        }
      }
    } finally {
      stop()
    }
  }

  /** Marks that something changed, and resumes the loop when it waits. */
  private wake (): void {
    this.dirty = true
    const waiting = this.waiting
    this.waiting = undefined
    waiting?.()
  }

  private state (): State {
    const { views } = this.deps
    const view = views.byWhat[this.query.what]
    try {
      view.read()
    } catch (err) {
      return { live: false, reason: (err as Error).message }
    }
    if (!view.stale) return { live: true }
    if (!views.connected()) return { live: false, reason: 'the service is cut off from NATS; the stream shows what it last knew and goes on when NATS is back' }
    return { live: false, reason: `bucket ${view.bucket} is being read again (after a reconnect or a re-creation); the stream shows what it last knew until it is caught up` }
  }

  /** One look: says a change of state, then sends a snapshot or the changes after the last one sent. */
  private async step (): Promise<void> {
    const state = this.state()
    if (state.live !== this.announced) {
      if (state.live && this.announced === false) this.sse.send('live', JSON.stringify({ reason: `bucket ${BUCKETS[this.query.what]} is followed live` }))
      if (!state.live) this.sse.send('stale', JSON.stringify({ reason: state.reason }))
      this.announced = state.live
    }
    if (this.deps.views.byWhat[this.query.what].status().state !== 'live') return
    try {
      if (this.position === undefined) await this.snapshot()
      else await this.changes(this.position)
    } catch (err) {
      if (!(err instanceof ProvisionerError) || !['CURSOR_EXPIRED', 'NOT_READY', 'BUCKET_MISSING'].includes(err.code)) throw err
      // The cursor cannot be served (another generation, or one this instance does not reach), or
      // the bucket went while a snapshot was paged: start again from a snapshot once it can be read.
      this.resetReason = err.code === 'BUCKET_MISSING' ? `bucket ${BUCKETS[this.query.what]} went away during the snapshot` : err.message
      this.position = undefined
      this.syncing = false
      if (err.code === 'CURSOR_EXPIRED' || this.deps.views.byWhat[this.query.what].status().state === 'live') this.dirty = true
    }
  }

  /**
   * Every matching entry, page by page, waiting for the reader between events. The changes after
   * the first page's cursor then complete it (steps of `changes`), so a bucket moving while the
   * pages are read leaves no gap; `synced` follows them.
   */
  private async snapshot (): Promise<void> {
    const { provisioning } = this.deps
    if (this.resetReason !== undefined) {
      // An empty id makes a browser forget the old one: a stream cut during the snapshot starts over.
      this.sse.send('reset', JSON.stringify({ reason: this.resetReason }), '')
      this.resetReason = undefined
    }
    const first = provisioning.snapshot(this.query, undefined, PAGE)
    const start = parseCursor(first.cursor)
    let page = first
    for (;;) {
      for (const json of page.entries) {
        this.sse.send('put', json)
        if (!(await this.sse.drained())) return
      }
      if (page === first) {
        for (const json of first.outOfShape) {
          this.sse.send('outOfShape', json)
          if (!(await this.sse.drained())) return
        }
      }
      if (page.next === undefined) break
      page = provisioning.snapshot(this.query, page.next, PAGE)
      if (parseCursor(page.cursor).generation !== start.generation) {
        throw new ProvisionerError('CURSOR_EXPIRED', `bucket ${BUCKETS[this.query.what]} was created again during the snapshot`)
      }
    }
    this.position = start
    this.syncing = true
    this.dirty = true
  }

  /** The changes after `since`, a page at a time, each with its cursor as id; `synced` once caught up. */
  private async changes (since: Cursor): Promise<void> {
    const { provisioning } = this.deps
    const view = this.deps.views.byWhat[this.query.what].status()
    const held = this.deps.views.byWhat[this.query.what].read()
    const batch = this.fanout.changes(`${this.asked}${formatCursor(since.revision, since.generation)}`, formatCursor(held.revision, held.generation), () => provisioning.changes({ ...this.query, since }, PAGE))
    let next = parseCursor(batch.cursor)
    // Read in the same turn as the changes, so that `total` is of the state `cursor` names.
    const synced = !batch.more && this.syncing ? provisioning.count(this.query) : undefined
    // Every change the view holds has been looked at: the next look starts after them, so that
    // writes the filter leaves out are not read again and again by a narrow stream.
    if (!batch.more && view.state === 'live' && !view.stale && view.revision > next.revision) next = { revision: view.revision, generation: next.generation }
    for (const c of batch.changes) {
      this.sse.send(c.type, c.json, formatCursor(c.revision, next.generation))
      this.position = { revision: c.revision, generation: next.generation }
      if (!(await this.sse.drained())) return
    }
    this.position = next
    if (synced !== undefined) {
      this.syncing = false
      this.sse.send('synced', JSON.stringify({ cursor: batch.cursor, total: synced.total, stale: synced.stale }), batch.cursor)
      await this.sse.drained()
    }
    if (batch.more) this.dirty = true
  }
}

/** The parameters a stream takes beside its filters. */
const STREAM_PARAMETERS = ['lastEventId', 'access_token']
/** The list route's parameters that a stream does not take. */
const NOT_HERE = ['after', 'limit', 'since', 'wait']

/**
 * Reads a stream's query string (as fastify parses it) and its Last-Event-ID header into the
 * question it follows and the cursor it resumes from; the header wins over `lastEventId`.
 * `access_token` is the transport's (access.ts reads it) and is not a filter.
 */
function readStream (what: What, parameters: Record<string, unknown>, header: unknown): { query: Query, resume: string | undefined } {
  const where = `GET /v1/${what}/events`
  const takes = [...NARROWED_BY[what], ...STREAM_PARAMETERS]
  const { lastEventId, access_token: _token, ...filters } = parameters
  for (const name of Object.keys(filters)) {
    if (NOT_HERE.includes(name)) {
      throw badRequest(name, `"${name}" is not a parameter of ${where}; it takes ${takes.join(', ')}: the stream sends every matching entry, then each change, and resumes from Last-Event-ID (or lastEventId=)`)
    }
  }
  const query = readParameters(what, filters, where, takes)
  if (lastEventId !== undefined && typeof lastEventId !== 'string') {
    throw badRequest('lastEventId', 'lastEventId is given more than once; give the id of the last event received, once')
  }
  const given = typeof header === 'string' && header !== '' ? header : lastEventId
  return { query, resume: given === '' ? undefined : given }
}

const EVENT_DATA = {
  put: 'an entry, as in answers (`{"key",…fields,"value"|"raw"|"rawBase64","problem"?,"revision","updated"}`)',
  outOfShape: 'an out-of-shape key the filter keeps (`{"key","revision","reason"}`)',
  synced: '`{"cursor","total","stale"}`: the snapshot or the missed changes are complete; `total` counts every matching entry now',
  delete: '`{"key",…fields,"revision"}` of a key deleted or purged (an out-of-shape key\'s has `key` and `revision` alone)',
  stale: '`{"reason"}`: cut off from NATS, the bucket missing or loading, or being read again; the stream goes on (or its snapshot follows) when it can',
  live: '`{"reason"}`: followed live again after `stale`',
  reset: '`{"reason"}`: the cursor cannot be served (malformed, another generation of the bucket, or older than the deletions known) or the bucket was created again: forget what was received, a fresh snapshot and `synced` follow (its `id:` is empty)'
} satisfies Record<EventType, string>

const STREAM_EXAMPLE = [
  `retry: ${RETRY_MS}`,
  '',
  'event: put',
  'data: {"key":"ace.gitea.secret.db-password","node":"ace","module":"gitea","kind":"secret","name":"db-password","value":{"owner":65534},"revision":1,"updated":"2026-11-29T09:40:00.000Z"}',
  '',
  'id: 187-1795945200123456789',
  'event: synced',
  'data: {"cursor":"187-1795945200123456789","total":1,"stale":false}',
  '',
  'id: 188-1795945200123456789',
  'event: delete',
  'data: {"key":"ace.gitea.secret.db-password","node":"ace","module":"gitea","kind":"secret","name":"db-password","revision":188}',
  '',
  ''
].join('\n')

/** The stream route's query string, for the OpenAPI document. */
function streamQuerystring (what: What) {
  const properties: Record<string, ReturnType<typeof Type.Optional>> = {}
  for (const field of NARROWED_BY[what]) properties[field] = Type.Optional(parameterOf(field))
  properties['lastEventId'] = Type.Optional(Type.String({
    description: 'Resume after this event id (the cursor of the last event received), for a client that cannot send the `Last-Event-ID` header; the header wins. An id that cannot be served is answered by `reset` and a fresh snapshot.',
    examples: ['1234-1795945200123456789']
  }))
  properties['access_token'] = Type.Optional(Type.String({
    description: "The bearer token, for a browser's EventSource, which cannot set headers (when the gateway asks for tokens).",
    examples: ['mpt_example']
  }))
  return Type.Object(properties, { additionalProperties: false })
}

export function registerEvents (app: FastifyInstance, deps: EventsDeps): void {
  const heartbeatMs = deps.heartbeatMs ?? HEARTBEAT_MS
  const stallMs = deps.stallMs ?? STALL_MS
  /** Each open stream. */
  const open = new Set<Sse>()
  const fanout = new Fanout()

  // What would keep the server's close waiting: streams, which never end by themselves, and
  // connections that never sent a byte (a client's spare or a browser's preconnect), which Node
  // counts as awaiting a request rather than idle until its headers timeout, long after a stop.
  const connections = new Set<Socket>()
  app.server.on('connection', (socket: Socket) => {
    connections.add(socket)
    socket.once('close', () => connections.delete(socket))
  })
  app.addHook('preClose', async () => {
    for (const sse of open) sse.end()
    for (const socket of connections) if (socket.bytesRead === 0) socket.destroy()
  })

  async function stream (what: What, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const { query, resume } = readStream(what, request.query as Record<string, unknown>, request.headers['last-event-id'])
    let sse: Sse | undefined
    // Ended early (another caller's share, or its token gone on SIGHUP), a stream's EventSource
    // comes back and meets the rule or the new tokens: 503, 401 or 403.
    const held: Hold = { caller: callerOf(request), admitted: request.admitted, end: () => sse?.end() }
    const full = deps.streams.admit(held, request.method === 'HEAD')
    if (full !== undefined) {
      reply.header('retry-after', String(RETRY_AFTER_S))
      replyError(reply, full)
      return
    }
    if (request.method === 'HEAD') {
      // Only the headers a stream would have: a HEAD request must not hold a stream open.
      reply.header('content-type', 'text/event-stream; charset=utf-8').header('cache-control', 'no-cache').send()
      return
    }
    reply.hijack()
    const raw = reply.raw
    // The headers set so far (CORS, request id, helmet's) go out with the stream's own.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) raw.setHeader(name, value)
    raw.setHeader('content-type', 'text/event-stream; charset=utf-8')
    raw.setHeader('cache-control', 'no-cache')
    raw.setHeader('x-accel-buffering', 'no')
    // Over HTTP/1.1 a stream's connection is never used again: closed with it, the service's stop
    // need not wait for it to idle. HTTP/2 forbids the header: its streams share a connection.
    const ownsConnection = request.raw.httpVersionMajor < 2
    if (ownsConnection) raw.setHeader('connection', 'close')
    raw.writeHead(200)
    const stream = sse = new Sse(raw, ownsConnection, stallMs, fanout, (type) => deps.metrics.eventSent(type))
    open.add(stream)
    deps.metrics.streamOpened()
    const heartbeat = setInterval(() => stream.heartbeat(), heartbeatMs)
    void stream.closed.then(() => {
      clearInterval(heartbeat)
      open.delete(stream)
      deps.streams.release(held)
      deps.metrics.streamClosed()
    })
    stream.write(`retry: ${RETRY_MS}\n\n`)
    try {
      await new StreamOfQuestion(deps, fanout, stream, query, resume).run()
    } catch (err) {
      request.log.error({ err }, 'an event stream failed; ending it (the client resumes from its last id)')
      stream.end()
    }
  }

  for (const what of WHATS) {
    app.get(`/v1/${what}/events`, {
      validatorCompiler: judgedByTheDomain,
      schema: {
        tags: ['provisioning'],
        operationId: `follow${what[0]?.toUpperCase()}${what.slice(1)}`,
        summary: `Follow ${what} live: Server-Sent Events.`,
        description: `The change feed of bucket \`${BUCKETS[what]}\` (keys \`${shapeOf(what)}\`) narrowed by the list's filters, as Server-Sent Events ` +
          '(`EventSource` in a browser, `curl -N`). First `retry:`, then one `put` per matching entry and one `outOfShape` per out-of-shape key the filter keeps, ' +
          'then `synced`; afterwards `put`, `delete` and `outOfShape` for each matching change in revision order (a key changed again before the stream read it is sent once, at its latest change), ' +
          'and `stale`/`live` when the view\'s state changes. ' +
          'Every event after the snapshot, and `synced`, has an `id:` that is its cursor: a client that reconnects with `Last-Event-ID` (or `lastEventId=`) ' +
          'receives the changes it missed, latest per key, deletions included, then `synced`, or `reset` and a fresh snapshot when that cursor cannot be served. ' +
          'A comment line every 15 s keeps it alive; a client too slow to read is disconnected (it resumes by its last id). ' +
          'A request that can be served is always answered 200, even while the bucket is missing or loading (said by `stale`).',
        querystring: streamQuerystring(what),
        response: {
          200: {
            description: 'The event stream. Events and their `data:` (JSON):\n' +
              Object.entries(EVENT_DATA).map(([type, data]) => `- \`${type}\`: ${data}`).join('\n'),
            headers: {
              'Cache-Control': Type.String({ description: '`no-cache`.' }),
              'X-Accel-Buffering': Type.String({ description: '`no`: a proxy in front passes events on at once.' })
            },
            content: { 'text/event-stream': { schema: Type.String({ description: 'Server-Sent Events, UTF-8.' }), example: STREAM_EXAMPLE } }
          },
          400: {
            description: 'A parameter that the route does not take, or a value that will not do; the message names it and what would have worked.',
            content: { 'application/json': { schema: Type.Ref('ErrorBody'), example: refusal(() => readStream('needs', { since: '1234-1795945200123456789' }, undefined)) } }
          },
          500: { description: 'The service failed to answer; the fault is logged.', content: { 'application/json': { schema: Type.Ref('ErrorBody'), example: INTERNAL_EXAMPLE } } },
          503: {
            description: `This instance holds as many streams as HTTP_MAX_STREAMS allows and this caller holds its even share of them; try again after \`Retry-After\` seconds (${RETRY_AFTER_S}).`,
            headers: { 'Retry-After': Type.String({ description: 'Seconds to wait before trying again.' }) },
            content: { 'application/json': { schema: Type.Ref('ErrorBody'), example: new ProvisionerError('NOT_READY', `this instance holds 1000 event streams, its most (HTTP_MAX_STREAMS), and this caller holds 1000 of an even share of 1000; try again in ${RETRY_AFTER_S} s or ask another instance`).toBody() } }
          }
        }
      }
    }, async (request, reply) => await stream(what, request, reply))
  }
}
