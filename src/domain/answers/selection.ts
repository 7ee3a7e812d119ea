// What a filter keeps of one bucket's contents, and the one walk over it in key order that every
// answer reads: the list, the snapshot, the count and the facets; `since` reads the changes through its narrowing.

import { FIELDS, tokenOf, type What } from '../wire/key-shapes.js'
import type { Filter } from '../wire/request.js'
import type { StoredEntry } from '../store/entry.js'
import type { Contents, FieldValues, OutOfShapeEntry } from '../store/contents.js'
import type { KeySet } from '../store/sorted-keys.js'

/** What a filter keeps, by field position (decoded values) and by key token for out-of-shape keys. */
export interface Narrowing {
  positions: FieldValues
  matches: (fields: readonly string[]) => boolean
  keepsTokens: (tokens: readonly string[]) => boolean
}

/** Whether `value` is one of `values`: a field's one value, or a set of several. */
type Kept = string | ReadonlySet<string>
const keeps = (kept: Kept, value: string | undefined): boolean => typeof kept === 'string' ? value === kept : value !== undefined && kept.has(value)
const keptOf = (values: readonly string[]): Kept => values.length === 1 ? values[0] as string : new Set(values)

export function narrowing (what: What, filter: Filter): Narrowing {
  const positions = new Map<number, readonly string[]>()
  const fields: Array<[number, Kept]> = []
  const tokens: Array<[number, Kept]> = []
  FIELDS[what].forEach((f, i) => {
    const values = filter[f]
    if (values === undefined) return
    positions.set(i, values)
    fields.push([i, keptOf(values)])
    tokens.push([i, keptOf(values.map((v) => tokenOf(f, v)))])
  })
  return {
    positions,
    matches: (have) => {
      for (const [p, kept] of fields) if (!keeps(kept, have[p])) return false
      return true
    },
    // An out-of-shape key is left out only when a token it does have is none of the filter's. A
    // key always has a first token, so a node filter (a scoped token's too) keeps only the
    // out-of-shape keys that start with one of its nodes.
    keepsTokens: (have) => tokens.every(([p, kept]) => have[p] === undefined || keeps(kept, have[p]))
  }
}

/**
 * The entries a filter keeps of one generation, read from the narrowest set holding them all: when
 * every key of that set matches (`exact`), nothing is checked and a count is the set's size.
 */
export class Selection {
  private readonly set: KeySet
  /** Whether every key of the set read is kept: then a walk stops as soon as its visitor does, and a count is the set's size. */
  readonly exact: boolean

  constructor (readonly contents: Contents, readonly n: Narrowing) {
    const { set, exact } = contents.candidates(n.positions)
    this.set = set
    this.exact = exact
  }

  /** How many entries the filter keeps. */
  count (): number {
    if (this.exact) return this.set.size
    return this.walk(undefined, () => true).after
  }

  /**
   * Visits the kept entries after `after` in key order until `visit` returns false; gives how many
   * kept entries precede them, and (`after`) how many of those after were visited. The entry is
   * the contents' own: nothing is allocated per entry.
   */
  walk (after: string | undefined, visit: (e: StoredEntry) => boolean): { before: number, after: number } {
    const { set, exact, n } = this
    const entries = this.contents.entries
    const start = exact && after !== undefined ? set.upperBound(after) : 0
    let before = start
    let visited = 0
    for (let i = start; i < set.size; i++) {
      const e = entries.at(set.slotAt(i))
      if (!exact && !n.matches(e.fields)) continue
      if (after !== undefined && e.key <= after) {
        before++
        continue
      }
      visited++
      if (!visit(e)) break
    }
    return { before, after: visited }
  }

  /** The out-of-shape keys the filter keeps, sorted by key. */
  * outOfShape (): Generator<OutOfShapeEntry> {
    for (const o of this.contents.outOfShapeInOrder()) if (this.n.keepsTokens(o.tokens)) yield o
  }
}
