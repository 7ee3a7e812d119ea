// The one binary search the contents use: over an array in ascending order, where the items a
// predicate holds for all come first.

/** The position of the first item of `sorted` for which `before` no longer holds. */
export function partitionPoint<T> (sorted: ArrayLike<T>, before: (item: T) => boolean): number {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (before(sorted[mid] as T)) lo = mid + 1
    else hi = mid
  }
  return lo
}
