// Reads an event stream as a browser's EventSource does, with eventsource-parser (the WHATWG
// parsing rules, line ends of any kind and across chunks), over undici, so a test can wait for the
// events it expects and see the comments between them. Each event's data is checked against its
// schema (wire.ts); a stream that sent one that does not fit fails its test.

import { createParser, type EventSourceParser } from 'eventsource-parser'
import { request } from 'undici'
import { expect, onTestFinished, vi } from 'vitest'
import type { What } from '../../src/domain/wire/key-shapes.js'
import type { Overview } from '../../src/domain/wire/schemas.js'
import { checkEventData, checkHttpBody, streamWhat } from './wire.js'

export interface SseEvent {
  event: string
  data: string
  /** The id field when the event had one ('' for an empty `id:`). */
  id?: string
}

/** A parser fed the stream's bytes (or text) as they arrive; what it has read so far is in its fields. */
export class SseParser {
  readonly events: SseEvent[] = []
  comments = 0
  retry: number | undefined
  /** Events whose data did not fit its schema, said in words (only for a stream of a known `what`). */
  readonly faults: string[] = []
  private readonly parser: EventSourceParser
  // Streaming: a character split across two chunks is read whole.
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true })

  constructor (what?: What | Overview) {
    this.parser = createParser({
      onEvent: (e) => {
        const event: SseEvent = { event: e.event ?? 'message', data: e.data, ...(e.id === undefined ? {} : { id: e.id }) }
        if (what !== undefined) {
          try {
            checkEventData(what, event.event, event.data)
          } catch (err) {
            this.faults.push((err as Error).message)
          }
        }
        this.events.push(event)
      },
      onComment: () => { this.comments++ },
      onRetry: (ms) => { this.retry = ms }
    })
  }

  feed (chunk: Uint8Array | string): void {
    this.parser.feed(typeof chunk === 'string' ? chunk : this.utf8.decode(chunk, { stream: true }))
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
  const parser = new SseParser(streamWhat(url))
  const close = (): void => abort.abort()
  onTestFinished(close)
  onTestFinished(() => { expect(parser.faults, 'events whose data does not fit its schema').toEqual([]) })
  let body = ''
  const ended = (async () => {
    try {
      for await (const chunk of res.body) {
        if (res.statusCode === 200) parser.feed(chunk as Buffer)
        else body += (chunk as Buffer).toString('utf8')
        await gate?.()
      }
    } catch {
      // Closed by the test, or cut by the server: `ended` says only that it is over.
    }
  })()
  if (res.statusCode !== 200) {
    await ended
    const type = res.headers['content-type']
    await checkHttpBody('GET', url, res.statusCode, Array.isArray(type) ? type[0] : type, body)
  }
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
