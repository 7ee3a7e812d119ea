// The distinct values of one field among the entries a filter keeps (facets, SPEC §10): read from
// the field's index when nothing narrows, else counted over the narrowest set the filter names.

import { BUCKETS, FIELDS, isDecoded, type What } from '../wire/key-shapes.js'
import { formatCursor } from '../wire/cursor.js'
import type { Contents } from '../store/contents.js'
import { Selection, type Narrowing } from './selection.js'
import { pageOf, type Row } from './pages.js'

interface Counted { count: number, revision: number }

/**
 * Each value's count among the entries `n` keeps and the last revision that changed a key holding
 * it: the value's own and the filter's are both never earlier than that, so the earlier of the two is kept.
 */
function counted (contents: Contents, n: Narrowing, position: number): Map<string, Counted> {
  const index = contents.valuesAt(position)
  if (n.positions.size === 0) return index
  const filterRevision = contents.revisionFor(n.positions)
  const out = new Map<string, Counted>()
  new Selection(contents, n).walk(undefined, ({ fields }) => {
    const value = fields[position] as string
    const c = out.get(value)
    if (c !== undefined) c.count++
    else out.set(value, { count: 1, revision: Math.min(index.get(value)?.revision ?? filterRevision, filterRevision) })
    return true
  })
  return out
}

/** Values in the order of their UTF-8 bytes: a token's are ASCII, a decoded name's may be anything. */
function sortedValues (values: Iterable<string>, decoded: boolean): string[] {
  if (!decoded) return [...values].sort()
  return [...values].map((v) => ({ v, b: Buffer.from(v) })).sort((x, y) => Buffer.compare(x.b, y.b)).map((x) => x.v)
}

export interface FacetsAsked {
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
export function facetsJson (asked: FacetsAsked, n: Narrowing): string {
  const { what, contents, by, revision } = asked
  const position = (FIELDS[what] as readonly string[]).indexOf(by)
  const decoded = isDecoded(by)
  const values = counted(contents, n, position)
  const after = asked.after === undefined ? undefined : Buffer.from(asked.after)
  const rows = function * (): Generator<Row> {
    for (const value of sortedValues(values.keys(), decoded)) {
      const c = values.get(value) as Counted
      yield { key: value, line: () => ({ json: `{"value":${JSON.stringify(value)},"count":${c.count},"revision":${c.revision}}` }) }
    }
  }
  const past = after === undefined ? undefined : (row: Row) => Buffer.compare(Buffer.from(row.key), after) > 0
  const page = pageOf(rows(), past, asked.limit, asked.budget)
  let outOfShape = 0
  for (const o of contents.outOfShape.values()) if (n.keepsTokens(o.tokens)) outOfShape++
  return `{"what":"${what}","bucket":"${BUCKETS[what]}","by":"${by}","revision":${revision},"cursor":"${formatCursor(revision, contents.generation)}",` +
    `"stale":${asked.stale},"total":${page.total},"values":[${page.rows}],"outOfShape":${outOfShape}${page.tail}}`
}
