// Server-Sent Events framing and back-pressure for one response: the `retry:` line, events with
// their `id:`, comments and the heartbeat, waiting for `drain`, cutting a reader that stalls, closing.

import type { ServerResponse } from 'node:http'

/** The event types a stream sends, in the order the OpenAPI document describes them. */
export type EventType = 'put' | 'outOfShape' | 'synced' | 'delete' | 'stale' | 'live' | 'reset'

/** What a browser waits before it reconnects (the `retry:` field). */
export const RETRY_MS = 2000
/** How long an ended stream may take to close before it is cut (ms). */
const END_GRACE_MS = 1000

/**
 * The last event framed, shared by the streams of one gateway: a put reaches a thousand streams
 * of one filter, each sending it in the same words, so it is framed once.
 */
export class Frames {
  private framed: { type: EventType, data: string, id: string | undefined, text: string } | undefined

  /** One event as its lines; the data's line breaks become `data:` lines, which the reader joins with \n. */
  frame (type: EventType, data: string, id: string | undefined): string {
    if (this.framed?.data === data && this.framed.type === type && this.framed.id === id) return this.framed.text
    let text = id === undefined ? '' : `id: ${id}\n`
    text += `event: ${type}\n`
    for (const line of data.split(/\r\n|\r|\n/)) text += `data: ${line}\n`
    this.framed = { type, data, id, text: `${text}\n` }
    return this.framed.text
  }
}

/** One open response: frames events and says whether its reader keeps up. */
export class Sse {
  private ended = false
  /** Resolves when the response closes, whoever closed it. */
  readonly closed: Promise<void>

  /** `ownsConnection`: HTTP/1.1, where the stream is its connection's, which closes with it (an HTTP/2 stream shares its connection). */
  constructor (private readonly raw: ServerResponse, private readonly ownsConnection: boolean, private readonly stallMs: number, private readonly frames: Frames, private readonly counted: (type: string) => void) {
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
    this.raw.write(this.frames.frame(type, data, id))
    this.counted(type)
  }

  /** The `retry:` line a stream starts with: how long a browser waits before it reconnects. */
  retry (): void {
    if (this.open) this.raw.write(`retry: ${RETRY_MS}\n\n`)
  }

  /** A comment line, only when nothing is waiting to be sent: a stream with data in flight is alive. */
  heartbeat (): void {
    if (this.open && this.raw.writableLength === 0) this.raw.write(':\n\n')
  }

  /**
   * Whether the next event may be written: at once (whether the stream is still open) while the
   * socket takes what is written, else a promise of true once it drained. A reader that takes
   * nothing for `stallMs` is disconnected, so a stream holds at most one event beyond the socket's
   * high-water mark.
   */
  taken (): boolean | Promise<boolean> {
    return this.raw.writableNeedDrain ? this.drained() : this.open
  }

  private async drained (): Promise<boolean> {
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
