// The distinct values of one field among the entries a filter keeps (facets: docs/glance.md), as the
// contents count them (Contents.valuesKept), sorted and paged.

import { BUCKETS, FIELDS, isDecoded, type What } from '../wire/key-shapes.js'
import { formatCursor } from '../wire/cursor.js'
import type { Contents, Counted } from '../store/contents.js'
import type { Narrowing } from './selection.js'
import { pageOf, type Row } from './pages.js'

/** Values in the order of their UTF-8 bytes: a token's are ASCII, a decoded name's may be anything. */
function sortedValues (values: Iterable<string>, decoded: boolean): string[] {
  if (!decoded) return [...values].sort()
  return [...values].map((v) => ({ v, b: Buffer.from(v) })).sort((x, y) => Buffer.compare(x.b, y.b)).map((x) => x.v)
}

export interface FacetsRequest {
  what: What
  contents: Contents
  stale: boolean
  /** The bucket field counted. */
  by: string
  revision: number
  after: string | undefined
  limit: number
  budget: number
}

/** The facets document, serialized. */
export function facetsJson (request: FacetsRequest, n: Narrowing): string {
  const { what, contents, by, revision } = request
  const position = (FIELDS[what] as readonly string[]).indexOf(by)
  const decoded = isDecoded(by)
  const values = contents.valuesKept(n.positions, position)
  const after = request.after === undefined ? undefined : Buffer.from(request.after)
  const rows = function * (): Generator<Row> {
    for (const value of sortedValues(values.keys(), decoded)) {
      const c = values.get(value) as Counted
      yield { key: value, line: () => ({ json: `{"value":${JSON.stringify(value)},"count":${c.count},"revision":${c.revision}}` }) }
    }
  }
  const past = after === undefined ? undefined : (row: Row) => Buffer.compare(Buffer.from(row.key), after) > 0
  const page = pageOf(rows(), past, request.limit, request.budget)
  let outOfShape = 0
  for (const o of contents.outOfShape.values()) if (n.keepsTokens(o.tokens)) outOfShape++
  return `{"what":"${what}","bucket":"${BUCKETS[what]}","by":"${by}","revision":${revision},"cursor":"${formatCursor(revision, contents.generation)}",` +
    `"stale":${request.stale},"total":${page.total},"values":[${page.rows.join(',')}],"outOfShape":${outOfShape}${page.tail}}`
}
