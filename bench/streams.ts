// Many open event streams (docs/following-changes.md, and the live rows of docs/glance.md) read by
// one plain HTTP client: each stream parses its events and notes when an awaited one arrives, so
// that the bench can time a write to the event at every stream. No EventSource: a thousand of them
// would measure the client more than the service.

import { Agent, request, type IncomingMessage } from 'node:http'

/** An event awaited: a `put` whose data the predicate takes. */
interface Waiter { takes: (data: Record<string, unknown>) => boolean, resolve: (at: number) => void }

/** One stream: its events as they arrive, parsed enough to find a put of a key. */
class Stream {
  private buffer = ''
  private synced: (() => void) | undefined
  private readonly waiters: Waiter[] = []
  readonly ready: Promise<void>

  constructor (private readonly res: IncomingMessage) {
    this.ready = new Promise((resolve) => { this.synced = resolve })
    res.setEncoding('utf8')
    res.on('data', (chunk: string) => this.read(chunk))
  }

  private read (chunk: string): void {
    this.buffer += chunk
    let end = this.buffer.indexOf('\n\n')
    while (end >= 0) {
      this.event(this.buffer.slice(0, end))
      this.buffer = this.buffer.slice(end + 2)
      end = this.buffer.indexOf('\n\n')
    }
  }

  private event (block: string): void {
    let type = 'message'
    let data = ''
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) type = line.slice(6).trim()
      else if (line.startsWith('data:')) data += line.slice(5).trimStart()
    }
    if (type === 'synced') this.synced?.()
    if (type !== 'put' || this.waiters.length === 0) return
    const at = performance.now()
    const put = JSON.parse(data) as Record<string, unknown>
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i] as Waiter
      if (w.takes(put)) {
        this.waiters.splice(i, 1)
        w.resolve(at)
      }
    }
  }

  /** When a put of `key` at `revision` or later arrives (performance.now() of its arrival). */
  putOf (key: string, revision: number): Promise<number> {
    return this.putWhere((put) => put['key'] === key && (put['revision'] as number) >= revision)
  }

  /** When a put whose data `takes` arrives (performance.now() of its arrival): a row of the live rows, say. */
  putWhere (takes: (data: Record<string, unknown>) => boolean): Promise<number> {
    return new Promise((resolve) => this.waiters.push({ takes, resolve }))
  }

  close (): void {
    this.res.destroy()
  }
}

export interface OpenStreams {
  streams: Stream[]
  close: () => void
}

/** What opening a stream met when the server does not serve it: the status, for the row's note. */
export class StreamRefused extends Error {
  constructor (readonly status: number) {
    super(`the event stream answered ${status}`)
  }
}

function open (agent: Agent, url: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume()
        reject(new StreamRefused(res.statusCode ?? 0))
        return
      }
      resolve(new Stream(res))
    })
    req.once('error', reject)
    req.end()
  })
}

/** Opens a stream on each of `urls` (a URL once for each stream on it), `batch` at a time, each through its snapshot (`synced`). */
export async function openStreams (urls: readonly string[], batch = 50): Promise<OpenStreams> {
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity })
  const streams: Stream[] = []
  const close = (): void => {
    for (const s of streams) s.close()
    agent.destroy()
  }
  try {
    while (streams.length < urls.length) {
      const opened = await Promise.all(urls.slice(streams.length, streams.length + batch).map((url) => open(agent, url)))
      streams.push(...opened)
      await Promise.all(opened.map((s) => s.ready))
    }
  } catch (err) {
    close()
    throw err
  }
  return { streams, close }
}
