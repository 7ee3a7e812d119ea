// The one binary search the contents use: over positions 0 to `length` in ascending order, where
// the positions a predicate holds for all come first (an array, a set's slots, the log's pages).

/** The first position below `length` for which `before` no longer holds, or `length`. */
export function partitionPoint (length: number, before: (i: number) => boolean): number {
  let lo = 0
  let hi = length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (before(mid)) lo = mid + 1
    else hi = mid
  }
  return lo
}
