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
