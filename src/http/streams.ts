// Opening an event stream (docs/following-changes.md): within its pool's bounds (holds.ts), with
// its headers and heartbeat, ended at a stop. The framing is sse.ts'; what a stream follows,
// stream-of-request.ts'; the routes that open streams, routes/events.ts'.

import type { Socket } from 'node:net'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Metrics } from '../metrics.js'
import { replyError } from './errors.js'
import { callerOf, RETRY_AFTER_S, type Hold, type Pool } from './holds.js'
import { Frames, Sse } from './sse.js'
import { SharedReads, type StreamFollower } from './stream-of-request.js'

export interface EventsOptions {
  /** Open streams at most (HTTP_MAX_STREAMS, default 1000); beyond, 503 with Retry-After, shared fairly between callers (holds.ts). */
  maxStreams?: number
  /** How often an idle stream sends a comment line to keep proxies from closing it (ms). */
  heartbeatMs?: number
  /** How long a stream's unsent bytes may wait for its reader before the stream is ended (ms). */
  stallMs?: number
}

export interface StreamsDeps extends Omit<EventsOptions, 'maxStreams'> {
  metrics: Metrics
  /** The open streams' pool (HTTP_MAX_STREAMS). */
  streams: Pool
}

const HEARTBEAT_MS = 15_000
const STALL_MS = 30_000

/** What the streams of one gateway share: an event framed once, changes read once, and the open streams a stop ends. */
export interface Gateway {
  readonly deps: StreamsDeps
  readonly open: Set<Sse>
  readonly frames: Frames
  readonly reads: SharedReads
  readonly heartbeatMs: number
  readonly stallMs: number
}

/** The streams' shared parts for one gateway; a stop ends its open streams and the connections that never sent a byte. */
export function streamGateway (app: FastifyInstance, deps: StreamsDeps): Gateway {
  const gateway: Gateway = { deps, open: new Set(), frames: new Frames(), reads: new SharedReads(), heartbeatMs: deps.heartbeatMs ?? HEARTBEAT_MS, stallMs: deps.stallMs ?? STALL_MS }
  // What would keep the server's close waiting: streams, which never end by themselves, and
  // connections that never sent a byte (a client's spare or a browser's preconnect), which Node
  // counts as awaiting a request rather than idle until its headers timeout, long after a stop.
  const connections = new Set<Socket>()
  app.server.on('connection', (socket: Socket) => {
    connections.add(socket)
    socket.once('close', () => connections.delete(socket))
  })
  app.addHook('preClose', async () => {
    for (const sse of gateway.open) sse.end()
    for (const socket of connections) if (socket.bytesRead === 0) socket.destroy()
  })
  return gateway
}

/** Opens one stream for the request, within the pool's bounds, and follows what `follower` follows until it closes. */
export async function openStream (gateway: Gateway, request: FastifyRequest, reply: FastifyReply, follower: (sse: Sse) => StreamFollower): Promise<void> {
  const { deps, open, frames, heartbeatMs, stallMs } = gateway
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
  if (ownsConnection) {
    raw.setHeader('connection', 'close')
    // The body ends with its connection (RFC 9112 §6.3), so an event is one write with no chunk
    // framing: a put reaches a thousand streams, and its framing cost a quarter of their writes.
    raw.removeHeader('transfer-encoding')
  }
  raw.writeHead(200)
  const stream = sse = new Sse(raw, ownsConnection, stallMs, frames, (type) => deps.metrics.eventSent(type))
  open.add(stream)
  deps.metrics.streamOpened()
  const heartbeat = setInterval(() => stream.heartbeat(), heartbeatMs)
  void stream.closed.then(() => {
    clearInterval(heartbeat)
    open.delete(stream)
    deps.streams.release(held)
    deps.metrics.streamClosed()
  })
  stream.retry()
  try {
    await follower(stream).run()
  } catch (err) {
    request.log.error({ err }, 'an event stream failed; ending it (the client resumes from its last id)')
    stream.end()
  }
}
