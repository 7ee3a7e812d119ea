// The cursor of docs/following-changes.md: the point of a bucket's history an answer reflects, as `<revision>-<generation>`.
// The generation is the bucket stream's creation time in nanoseconds (NATS gives it to the
// nanosecond), so any instance reading the same bucket names it alike and a bucket deleted and
// created again is a new generation.

import { badRequest } from './errors.js'

export interface Cursor {
  revision: number
  generation: string
}

const CREATED = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/

/** A stream's creation time as nanoseconds since the epoch, in decimal; digits of anything else. */
export function generationOf (created: string): string {
  const m = CREATED.exec(created)
  const seconds = m === null ? NaN : Date.parse(`${m[1] as string}${m[3] as string}`)
  if (m === null || Number.isNaN(seconds)) return created.replace(/\D/g, '') || '0'
  return (BigInt(seconds) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'))).toString()
}

/**
 * Orders two generations by the creation time they name (docs/following-changes.md): negative when `a` is older.
 * Both are decimal digits, so the longer (leading zeros aside) is the later.
 */
export function compareGenerations (a: string, b: string): number {
  const x = a.replace(/^0+(?=\d)/, '')
  const y = b.replace(/^0+(?=\d)/, '')
  if (x.length !== y.length) return x.length - y.length
  return x < y ? -1 : x > y ? 1 : 0
}

export function formatCursor (revision: number, generation: string): string {
  return `${revision}-${generation}`
}

const CURSOR = /^(\d{1,16})-(\d{1,30})$/

/** Reads a cursor handed back as `since` (or as an event stream's Last-Event-ID). */
export function parseCursor (text: string, field = 'since'): Cursor {
  const m = CURSOR.exec(text)
  const revision = m === null ? NaN : Number(m[1])
  if (m === null || !Number.isSafeInteger(revision)) {
    throw badRequest(field, `${field}: ${JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text)} is not a cursor; it takes the \`cursor\` of an earlier answer, like "1234-1764400000000000000"`)
  }
  return { revision, generation: m[2] as string }
}

/**
 * `read` remembering the last cursor it read: a put sends one id to a thousand streams of a
 * filter, whose waiters then each ask what it names, so it is read once for them all.
 */
export function lastReadOf<T> (read: (cursor: string) => T): (cursor: string) => T {
  let last: { cursor: string, value: T } | undefined
  return (cursor) => {
    if (last?.cursor !== cursor) last = { cursor, value: read(cursor) }
    return last.value
  }
}

const lastRevision = lastReadOf((cursor) => parseCursor(cursor).revision)

/** The revision an event stream's cursor names (none: 0, before every change), read once for all the streams at one id. */
export const streamRevision = (cursor: string | undefined): number => cursor === undefined ? 0 : lastRevision(cursor)
