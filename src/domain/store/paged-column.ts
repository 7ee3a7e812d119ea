// A column of numbers by index, in typed-array pages that stay put: it grows a page at a time, not
// by copies into arrays twice the size (at 300k keys the doublings' freed arrays stayed in the
// process, ~38 B an entry of RSS that no heap counted). The stores' columns (entry.ts, key-table.ts,
// change-log.ts) are these. The number itself is read and written by the caller, in the page it is
// given: each such site then sees one kind of typed array, where a shared accessor would see four
// and be slower.

const PAGE_BITS = 13
/** Indexes a page holds. */
export const PAGE = 1 << PAGE_BITS

/** Where index `i` is in its page (a column `width` numbers an index keeps them from `width × inPage(i)`). */
export function inPage (i: number): number {
  return i & (PAGE - 1)
}

export type Page = Int32Array | Uint32Array | Float64Array | Uint8Array

export class PagedColumn<P extends Page> {
  private readonly pages: P[] = []

  /** `newPage` makes a page: PAGE numbers an index's worth (`width × PAGE` for `width` numbers an index). */
  constructor (private readonly newPage: () => P) {}

  /** Makes room for index `i`, the next after the last: a new page when `i` starts one. */
  grow (i: number): void {
    if (inPage(i) === 0) this.pages.push(this.newPage())
  }

  /** The page that holds index `i`. */
  pageOf (i: number): P {
    return this.pages[i >>> PAGE_BITS] as P
  }

  /** Puts `page` in place of the one that holds index `i` (a page widened to larger numbers). */
  replace (i: number, page: P): void {
    this.pages[i >>> PAGE_BITS] = page
  }
}

const MAX_UINT32 = 0xffff_ffff

/**
 * A column of one whole number an index, held in 32 bits (4 bytes an index) until a page is given
 * one that needs more (a revision past 4 billion messages, a time before 1970), then that page
 * alone in 64. The store's revisions and write times fit in 32 bits for as long as anyone runs
 * this: 8 bytes an entry less than Float64 pages (bench/RESULTS.md).
 */
export class WholeColumn {
  private readonly column = new PagedColumn<Uint32Array | Float64Array>(() => new Uint32Array(PAGE))

  /** Makes room for index `i`, the next after the last. */
  grow (i: number): void {
    this.column.grow(i)
  }

  at (i: number): number {
    return this.column.pageOf(i)[inPage(i)] as number
  }

  set (i: number, value: number): void {
    let page = this.column.pageOf(i)
    if (value > MAX_UINT32 || value < 0 || !Number.isInteger(value)) {
      if (page instanceof Uint32Array) this.column.replace(i, page = Float64Array.from(page))
    }
    page[inPage(i)] = value
  }
}
