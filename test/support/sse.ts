// Reads an event stream the way a browser's EventSource does (the WHATWG parsing rules: `data`
// lines joined with \n, one leading space dropped, an empty line dispatches, `:` starts a comment),
// over undici, so a test can wait for the events it expects and see the comments between them.

import { request } from 'undici'
import { expect, onTestFinished, vi } from 'vitest'

export interface SseEvent {
  event: string
  data: string
  /** The id field when the event had one ('' for an empty `id:`). */
  id?: string
}

/** A parser fed text as it arrives; what it has read so far is in its fields. */
export class SseParser {
  readonly events: SseEvent[] = []
  comments = 0
  retry: number | undefined
  private rest = ''
  private event: { event?: string, data?: string, id?: string } = {}

  feed (text: string): void {
    const lines = (this.rest + text).split(/\r\n|\r|\n/)
    this.rest = lines.pop() as string
    for (const line of lines) this.line(line)
  }

  private line (line: string): void {
    if (line === '') {
      if (this.event.data !== undefined) {
        this.events.push({ event: this.event.event ?? 'message', data: this.event.data, ...(this.event.id === undefined ? {} : { id: this.event.id }) })
      }
      this.event = {}
      return
    }
    if (line.startsWith(':')) {
      this.comments++
      return
    }
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
    if (field === 'data') this.event.data = this.event.data === undefined ? value : `${this.event.data}\n${value}`
    else if (field === 'event') this.event.event = value
    else if (field === 'id') this.event.id = value
    else if (field === 'retry' && /^\d+$/.test(value)) this.retry = Number(value)
  }
}

export interface SseStream extends SseParser {
  status: number
  headers: Record<string, string | string[] | undefined>
  /** The body when the status is not 200. */
  body: string
  /** Resolves when the server ends the stream. */
  ended: Promise<void>
  close (): void
}

/**
 * Opens `url` as an event stream; it is closed when the test finishes. `gate`, when given, is
 * awaited after each chunk is read: a slow reader, whose socket the server sees fill.
 */
export async function openStream (url: string, headers: Record<string, string> = {}, gate?: () => Promise<void>): Promise<SseStream> {
  const abort = new AbortController()
  const res = await request(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal })
  const parser = new SseParser()
  const close = (): void => abort.abort()
  onTestFinished(close)
  let body = ''
  const ended = (async () => {
    try {
      for await (const chunk of res.body) {
        const text = (chunk as Buffer).toString('utf8')
        if (res.statusCode === 200) parser.feed(text)
        else body += text
        await gate?.()
      }
    } catch {
      // Closed by the test, or cut by the server: `ended` says only that it is over.
    }
  })()
  if (res.statusCode !== 200) await ended
  return Object.assign(parser, { status: res.statusCode, headers: res.headers, body, ended, close })
}

/** Waits until the stream holds an event that `match` accepts after index `from`, and gives its index. */
export async function untilEvent (stream: SseParser, match: (e: SseEvent) => boolean, from = 0, timeout = 10_000): Promise<number> {
  return await vi.waitFor(() => {
    const i = stream.events.findIndex((e, n) => n >= from && match(e))
    expect(i, 'the event awaited').toBeGreaterThanOrEqual(0)
    return i
  }, { timeout, interval: 20 })
}

export const isSynced = (e: SseEvent): boolean => e.event === 'synced'
