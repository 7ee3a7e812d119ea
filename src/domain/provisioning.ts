// The answer to a question: the answer document of SPEC §4, built from a view's ready JSON,
// narrowed, paged and cut to fit. Both transports answer with exactly these bytes.

import { AnswerCache } from './answer-cache.js'
import { BUCKETS, FIELDS, tokenOf, type What } from './buckets.js'
import { ProvisionerError } from './errors.js'
import type { Query } from './request.js'
import { entryHead, type StoredEntry } from './entry.js'
import type { Contents } from './contents.js'
import type { Views } from './views.js'

/** An answer document as the transports send it, and the state it was built from. */
export interface Answer {
  /** The answer document, serialized: everything a client reads is in here. */
  json: string
  /** The state it was built from (see Provisioning.version). */
  version: string
}

export interface AskOptions {
  /** The most bytes the serialized answer may take (the bus: the connection's max payload). */
  maxBytes?: number
  /** The limit when the query gives none. */
  defaultLimit?: number
}

/** Room kept for the answer's head and tail around the entries. */
const FRAME = 512
/** Out-of-shape keys listed in one answer at the most; more are counted in outOfShapeOmitted. */
const OUT_OF_SHAPE_MAX = 1000
/**
 * The share of an answer's room its out-of-shape list may take: every answer about the bucket lists
 * them, and they must not crowd out the entries asked for.
 */
const OUT_OF_SHAPE_SHARE = 0.25

export interface Provisioning {
  ask (query: Query, opts?: AskOptions): Answer
  /** One entry's JSON by key; NOT_FOUND when the bucket holds no such entry. */
  entry (what: What, key: string): { json: string, version: string }
  /**
   * Names the state answers about `what` are built from: while it is the same, one question gets
   * the same bytes, so a transport can validate a cached answer without building it again.
   * Refuses like the questions do while the bucket is missing or loading.
   */
  version (what: What): string
}

function versionOf (contents: Contents, stale: boolean): string {
  return `${contents.revision}-${stale ? 's' : 'c'}-${contents.created}`
}

function tooLarge (what: What, e: StoredEntry, room: number): string {
  const problem = `the entry is ${e.bytes} bytes, more than one answer here may carry (${room}); read the key from bucket ${BUCKETS[what]} directly`
  return `${entryHead(what, e.key, e.fields)},"problem":${JSON.stringify(problem)},"revision":${e.revision},"updated":"${new Date(e.updated).toISOString()}"}`
}

function outOfShapePart (contents: Contents, what: What, filter: Record<string, string>, room: number): { json: string, bytes: number, omitted: number } {
  const checks = FIELDS[what].map((f, i) => [i, filter[f] === undefined ? undefined : tokenOf(f, filter[f])] as const).filter(([, t]) => t !== undefined)
  const parts: string[] = []
  let bytes = 0
  let omitted = 0
  const odd = contents.oddKeys
  for (let i = 0; i < odd.size; i++) {
    const o = contents.outOfShape.get(odd.at(i) as string)
    if (!o || checks.some(([p, t]) => o.tokens[p] !== undefined && o.tokens[p] !== t)) continue
    if (parts.length < OUT_OF_SHAPE_MAX && bytes + o.bytes + 1 <= room) {
      parts.push(o.json)
      bytes += o.bytes + 1
    } else {
      omitted++
    }
  }
  return { json: `[${parts.join(',')}]`, bytes: bytes + 2, omitted }
}

export function createProvisioning (views: Views): Provisioning {
  const cache = new AnswerCache<Answer>()

  function ask (query: Query, opts: AskOptions = {}): Answer {
    const { what, filter, after } = query
    const view = views.byWhat[what]
    const contents = view.read()
    const stale = view.stale
    const version = versionOf(contents, stale)
    const key = JSON.stringify([what, FIELDS[what].map((f) => filter[f]), after, query.limit, opts.defaultLimit, opts.maxBytes])
    const cached = cache.get(key, version)
    if (cached !== undefined) return cached
    const answer = build(query, opts, contents, stale, version)
    cache.set(key, version, answer, answer.json.length)
    return answer
  }

  function build (query: Query, opts: AskOptions, contents: Contents, stale: boolean, version: string): Answer {
    const { what, filter, after } = query
    const limit = query.limit ?? opts.defaultLimit ?? Infinity
    const budget = (opts.maxBytes ?? Infinity) - FRAME

    const positions = new Map<number, string>()
    FIELDS[what].forEach((f, i) => { if (filter[f] !== undefined) positions.set(i, filter[f]) })
    const matches = (e: StoredEntry): boolean => {
      const fields = e.fields
      for (const [p, v] of positions) if (fields[p] !== v) return false
      return true
    }

    const odd = outOfShapePart(contents, what, filter, budget * OUT_OF_SHAPE_SHARE)
    const { set, exact } = contents.candidates(positions)
    const taken: string[] = []
    let used = odd.bytes
    let total = 0
    let omitted = 0
    let cut: 'payload' | 'limit' | undefined
    let next: string | undefined
    const start = exact && after !== undefined ? set.upperBound(after) : 0
    for (let i = start; i < set.size; i++) {
      const e = contents.entries.get(set.at(i) as string) as StoredEntry
      if (!exact && !matches(e)) continue
      total++
      if (after !== undefined && e.key <= after) continue
      if (cut === undefined) {
        const tail = 66 + 6 * e.key.length // bounds `,"next":…,"cut":{…}` for any key
        let json = e.json
        if (e.bytes + 1 + tail > budget - odd.bytes) json = tooLarge(what, e, budget)
        const bytes = json === e.json ? e.bytes : Buffer.byteLength(json)
        if (taken.length >= limit) cut = 'limit'
        else if (used + bytes + 1 + tail > budget) cut = 'payload'
        if (cut === undefined) {
          taken.push(json)
          used += bytes + 1
          next = e.key
          continue
        }
      }
      omitted++
      if (exact) {
        omitted = set.size - i
        break
      }
    }
    if (exact) total = set.size

    const head = `{"what":"${what}","bucket":"${BUCKETS[what]}","revision":${contents.revision},"total":${total},"stale":${stale}`
    let json = `${head},"entries":[${taken.join(',')}],"outOfShape":${odd.json}`
    if (odd.omitted > 0) json += `,"outOfShapeOmitted":${odd.omitted}`
    if (cut !== undefined && next === undefined && after !== undefined) next = after
    if (cut !== undefined && next !== undefined) json += `,"next":${JSON.stringify(next)},"cut":{"reason":"${cut}","omitted":${omitted}}`
    return { json: `${json}}`, version }
  }

  return {
    ask,
    entry (what, key) {
      const view = views.byWhat[what]
      const contents = view.read()
      const e = contents.entries.get(key)
      if (!e) {
        throw new ProvisionerError('NOT_FOUND', `bucket ${BUCKETS[what]} holds no ${FIELDS[what].join('.')} entry "${key}"; ask the list (what=${what}) to see what it holds`)
      }
      return { json: e.json, version: versionOf(contents, view.stale) }
    },
    version (what) {
      const view = views.byWhat[what]
      return versionOf(view.read(), view.stale)
    }
  }
}
