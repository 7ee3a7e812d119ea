// Bytes written one after the other into a buffer that grows, for the answers written straight as
// UTF-8: an uncached list answer made each entry a string, joined them, then encoded the whole, and
// an entry's string cost more than its value's bytes (bench/RESULTS.md, "HTTP, distinct requests").

const START = 64 * 1024

export class ByteWriter {
  private buffer = Buffer.allocUnsafe(START)
  /** Bytes written so far; set it back to a mark to take back what followed the mark. */
  length = 0

  /** Room for `n` more bytes. */
  private room (n: number): Buffer {
    if (this.length + n > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(2 * this.buffer.length, this.length + n))
      this.buffer.copy(grown, 0, 0, this.length)
      this.buffer = grown
    }
    return this.buffer
  }

  /** Text known to hold no character past U+00FF (an in-shape key, a number, a date): a byte each. */
  latin1 (text: string): void {
    const buffer = this.room(text.length)
    let at = this.length
    // A loop: most such texts are a few bytes, where a call into the encoder costs more.
    for (let i = 0; i < text.length; i++) buffer[at++] = text.charCodeAt(i)
    this.length = at
  }

  /** Any text, as UTF-8. */
  utf8 (text: string): void {
    this.length += this.room(3 * text.length).write(text, this.length, 'utf8')
  }

  byte (b: number): void {
    this.room(1)[this.length++] = b
  }

  bytes (from: Uint8Array, start = 0, end = from.length): void {
    const buffer = this.room(end - start)
    if (end - start > 64) buffer.set(from.subarray(start, end), this.length)
    else for (let i = start, at = this.length; i < end; i++) buffer[at++] = from[i] as number
    this.length += end - start
  }

  /** Writes again the bytes written at `start` to `end`. */
  again (start: number, end: number): void {
    const buffer = this.room(end - start)
    for (let i = start, at = this.length; i < end; i++) buffer[at++] = buffer[i] as number
    this.length += end - start
  }

  /** The byte written at `at`. */
  at (at: number): number {
    return this.buffer[at] as number
  }

  /** The bytes written from `start` on, as text. */
  text (start = 0): string {
    return this.buffer.toString('utf8', start, this.length)
  }

  /** The bytes written from `start` on, not copied: valid until the next write. */
  view (start = 0): Buffer {
    return this.buffer.subarray(start, this.length)
  }
}
