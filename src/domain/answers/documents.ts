// The answer documents of docs/verb.md and §8 as the transports send them, written in one place: the
// answers (provisioning.ts) choose what goes in, these functions write it. The entries' own JSON is
// the store's (store/entry.ts), made once per change.

import { BUCKETS, parseKey, type What } from '../wire/key-shapes.js'
import { formatCursor } from '../wire/cursor.js'
import { entryHead, type StoredEntry } from '../store/entry.js'
import type { OutOfShapeEntry } from '../store/contents.js'

/** Out-of-shape keys listed in one answer at the most; more are counted in outOfShapeOmitted. */
const OUT_OF_SHAPE_MAX = 1000

/** What every list and `since` document opens with. */
export interface DocumentHead {
  what: What
  stale: boolean
  /** The generation the cursor names. */
  generation: string
}

/** Why an answer stopped before the end: the limit asked, or the bytes it may take. */
export type Cut = 'payload' | 'limit'

function open ({ what, stale }: DocumentHead, revision: number, total: number): string {
  return `{"what":"${what}","bucket":"${BUCKETS[what]}","revision":${revision},"total":${total},"stale":${stale}`
}

/** An entry too large for the answer, in its place: its key, fields, revision and the problem. */
export function tooLarge (what: What, e: StoredEntry, bytes: number, room: number): string {
  const problem = `the entry is ${bytes} bytes, more than one answer here may carry (${room}); read the key from bucket ${BUCKETS[what]} directly`
  return `${entryHead(what, e.key, e.fields)},"problem":${JSON.stringify(problem)},"revision":${e.revision},"updated":"${new Date(e.updated).toISOString()}"}`
}

/** The JSON of a deletion: the key, its fields when it fits the bucket's shape, the revision. */
export function deletedJson (what: What, key: string, revision: number): string {
  const parsed = parseKey(what, key)
  const head = parsed.ok ? entryHead(what, key, parsed.values) : `{"key":${JSON.stringify(key)}`
  return `${head},"revision":${revision}}`
}

/** The out-of-shape keys of a list answer, as many as fit `room` (and OUT_OF_SHAPE_MAX); the rest counted. */
export function outOfShapeArray (kept: Iterable<OutOfShapeEntry>, room: number): { json: string, bytes: number, omitted: number } {
  const parts: string[] = []
  let bytes = 0
  let omitted = 0
  for (const o of kept) {
    if (parts.length < OUT_OF_SHAPE_MAX && bytes + o.bytes + 1 <= room) {
      parts.push(o.json)
      bytes += o.bytes + 1
    } else {
      omitted++
    }
  }
  return { json: `[${parts.join(',')}]`, bytes: bytes + 2, omitted }
}

/** What a list answer holds, chosen by its walk. */
export interface ListParts {
  revision: number
  total: number
  /** The entries' JSON, joined as an array's members, as UTF-8. */
  entries: Uint8Array
  outOfShape: { json: string, omitted: number }
  /** Set with `next` when the answer stopped before the end. */
  cut: { reason: Cut, omitted: number } | undefined
  next: string | undefined
}

/** The list document (docs/verb.md), as UTF-8: its entries are written as bytes already. */
export function listDocument (head: DocumentHead, parts: ListParts): Buffer {
  const { revision, cut, next } = parts
  let tail = `],"outOfShape":${parts.outOfShape.json}`
  if (parts.outOfShape.omitted > 0) tail += `,"outOfShapeOmitted":${parts.outOfShape.omitted}`
  if (cut !== undefined && next !== undefined) tail += `,"next":${JSON.stringify(next)},"cut":{"reason":"${cut.reason}","omitted":${cut.omitted}}`
  tail += `,"cursor":"${formatCursor(revision, head.generation)}"}`
  return Buffer.concat([Buffer.from(`${open(head, revision, parts.total)},"entries":[`), parts.entries, Buffer.from(tail)])
}

/** What a `since` answer holds, chosen by its walk over the changes. */
export interface SinceParts {
  /** The revision of the last change given (the cursor's). */
  last: number
  total: number
  put: readonly string[]
  delete: readonly string[]
  outOfShape: readonly string[]
  cut: { reason: Cut, omitted: number } | undefined
}

/** The `since` document (docs/following-changes.md): entries, deletions and out-of-shape keys, cut together. */
export function sinceDocument (head: DocumentHead, parts: SinceParts): string {
  let json = `${open(head, parts.last, parts.total)},"entries":[${parts.put.join(',')}],"deleted":[${parts.delete.join(',')}],"outOfShape":[${parts.outOfShape.join(',')}]`
  if (parts.cut !== undefined) json += `,"cut":{"reason":"${parts.cut.reason}","omitted":${parts.cut.omitted}}`
  return `${json},"cursor":"${formatCursor(parts.last, head.generation)}"}`
}
