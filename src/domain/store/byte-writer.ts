// Bytes written one after the other into a buffer that grows, for the answers written straight as
// UTF-8: an uncached list answer made each entry a string, joined them, then encoded the whole, and
// an entry's string cost more than its value's bytes (bench/RESULTS.md, "HTTP, distinct questions").

const START = 64 * 1024
const DAY_MS = 86_400_000
/** 0000-01-01 and 10000-01-01 in ms since the epoch: the instants toISOString writes with a four-digit year. */
const MIN_4_DIGIT_YEAR = -62_167_219_200_000
const MAX_4_DIGIT_YEAR = 253_402_300_800_000

/**
 * Copies `from[start..end)` into `to` at `at`; gives where it ended. A loop for the few bytes of a
 * key's token or a property's head, where a call into the native copy costs more; native past 64.
 */
export function copyBytes (from: Uint8Array, start: number, end: number, to: Uint8Array, at: number): number {
  if (end - start > 64) {
    to.set(from.subarray(start, end), at)
    return at + end - start
  }
  for (let i = start; i < end; i++) to[at++] = from[i] as number
  return at
}

/** `n` (0–99) as two digits at `at`. */
function twoDigits (buffer: Uint8Array, at: number, n: number): void {
  const tens = (n / 10) | 0
  buffer[at] = 0x30 + tens
  buffer[at + 1] = 0x30 + (n - 10 * tens)
}

/** The civil date of a day since the epoch as `YYYY-MM-DDT` (H. Hinnant's civil_from_days, in 400-year eras from 0000-03-01). */
function writeDate (days: number, out: Uint8Array): void {
  const z = days + 719468
  const era = Math.floor(z / 146097)
  const ofEra = z - era * 146097
  const yearOfEra = Math.floor((ofEra - Math.floor(ofEra / 1460) + Math.floor(ofEra / 36524) - Math.floor(ofEra / 146096)) / 365)
  const dayOfYear = ofEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const mp = Math.floor((5 * dayOfYear + 2) / 153)
  const day = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
  twoDigits(out, 0, Math.floor(year / 100))
  twoDigits(out, 2, year % 100)
  out[4] = 0x2d
  twoDigits(out, 5, month)
  out[7] = 0x2d
  twoDigits(out, 8, day)
  out[10] = 0x54
}

export class ByteWriter {
  private buffer = Buffer.allocUnsafe(START)
  /** Bytes written so far; set it back to a mark to take back what followed the mark. */
  length = 0
  /** The day `isoTime` last wrote and its `YYYY-MM-DDT`: the entries of an answer share a few days. */
  private isoDay = Number.NaN
  private readonly isoDate = new Uint8Array(11)

  /** Room for `n` more bytes: the buffer to write them in from `length` on, then set `length` past them. */
  reserve (n: number): Buffer {
    if (this.length + n > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(2 * this.buffer.length, this.length + n))
      this.buffer.copy(grown, 0, 0, this.length)
      this.buffer = grown
    }
    return this.buffer
  }

  /** Text known to hold no character past U+00FF (an in-shape key, a number, a date): a byte each. */
  latin1 (text: string): void {
    const buffer = this.reserve(text.length)
    let at = this.length
    // A loop: most such texts are a few bytes, where a call into the encoder costs more.
    for (let i = 0; i < text.length; i++) buffer[at++] = text.charCodeAt(i)
    this.length = at
  }

  /** Any text, as UTF-8. */
  utf8 (text: string): void {
    this.length += this.reserve(3 * text.length).write(text, this.length, 'utf8')
  }

  /** A whole number as JSON writes it (digits, no sign or exponent): a revision, a count. */
  decimal (n: number): void {
    if (!Number.isSafeInteger(n) || n < 0) {
      this.latin1(String(n))
      return
    }
    let digits = 1
    for (let p = 10; p <= n; p *= 10) digits++
    const buffer = this.reserve(digits)
    let at = this.length + digits
    this.length = at
    do {
      const rest = Math.floor(n / 10)
      buffer[--at] = 0x30 + (n - 10 * rest)
      n = rest
    } while (n > 0)
  }

  /**
   * An instant (ms since the epoch) as `Date.prototype.toISOString` writes it, without making a
   * Date or a string: every entry of an answer writes one, and most differ by their ms, which made
   * the Date and its text ~40 % of an uncached answer (bench/RESULTS.md).
   */
  isoTime (ms: number): void {
    if (!(ms >= MIN_4_DIGIT_YEAR && ms < MAX_4_DIGIT_YEAR) || !Number.isInteger(ms)) {
      // Years past four digits are written with a sign and six; Date says it as it does.
      this.latin1(new Date(ms).toISOString())
      return
    }
    const days = Math.floor(ms / DAY_MS)
    if (days !== this.isoDay) {
      this.isoDay = days
      writeDate(days, this.isoDate)
    }
    const buffer = this.reserve(24)
    const at = this.length
    this.length += 24
    for (let i = 0; i < 11; i++) buffer[at + i] = this.isoDate[i] as number
    // Whole numbers below 2^31 from here on: `| 0` truncates as Math.floor does.
    let rest = ms - days * DAY_MS
    const hours = (rest / 3_600_000) | 0
    rest -= hours * 3_600_000
    const minutes = (rest / 60_000) | 0
    rest -= minutes * 60_000
    const seconds = (rest / 1000) | 0
    const millis = rest - seconds * 1000
    twoDigits(buffer, at + 11, hours)
    buffer[at + 13] = 0x3a
    twoDigits(buffer, at + 14, minutes)
    buffer[at + 16] = 0x3a
    twoDigits(buffer, at + 17, seconds)
    buffer[at + 19] = 0x2e
    buffer[at + 20] = 0x30 + ((millis / 100) | 0)
    twoDigits(buffer, at + 21, millis % 100)
    buffer[at + 23] = 0x5a
  }

  byte (b: number): void {
    this.reserve(1)[this.length++] = b
  }

  bytes (from: Uint8Array, start = 0, end = from.length): void {
    this.length = copyBytes(from, start, end, this.reserve(end - start), this.length)
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
