// One page of rows, for the answers whose rows are made on demand (facets, nodes, modules):
// counted whole, paged after a row, cut at `limit` or at the answer's room, the way lists are.

/** A row in answer order: `key` is what `next` names it by. */
/** A row's JSON, and its UTF-8 length where the row keeps it: an answer of kept rows measures none of them again. */
export interface Line {
  readonly json: string
  readonly bytes?: number
}

export interface Row {
  readonly key: string
  /** Made only for the rows the page takes. */
  line: () => Line
}

export interface Page {
  /** The rows' JSON, in order. */
  rows: readonly string[]
  /** Every row given, whatever `after` and the cut. */
  total: number
  /** `,"next":…,"cut":{…}` when cut, else empty. */
  tail: string
}

/**
 * Takes the rows past `after` (a predicate: true once a row comes after it) until `limit` rows or
 * `budget` bytes are taken, and counts the rest.
 */
export function pageOf (rows: Iterable<Row>, after: ((row: Row) => boolean) | undefined, limit: number, budget: number): Page {
  const taken: string[] = []
  let used = 0
  let total = 0
  let omitted = 0
  let next: string | undefined
  let cut: 'limit' | 'payload' | undefined
  for (const row of rows) {
    total++
    if (after !== undefined && !after(row)) continue
    if (cut === undefined) {
      const { json, bytes: kept } = row.line()
      const bytes = (kept ?? Buffer.byteLength(json)) + 1
      // bounds `,"next":…,"cut":{…}` for any key
      const tail = 66 + 6 * row.key.length
      if (taken.length >= limit) cut = 'limit'
      else if (used + bytes + tail > budget) cut = 'payload'
      else {
        taken.push(json)
        used += bytes
        next = row.key
        continue
      }
    }
    omitted++
  }
  const tail = cut === undefined || next === undefined ? '' : `,"next":${JSON.stringify(next)},"cut":{"reason":"${cut}","omitted":${omitted}}`
  return { rows: taken, total, tail }
}
