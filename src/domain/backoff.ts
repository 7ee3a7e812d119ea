// The one backoff of the process: how long to wait before trying again after some failures in a row.

/** `firstMs` after the first failure, doubling with each one after it, never more than `maxMs`. */
export function backoff (firstMs: number, maxMs: number, failures: number): number {
  return Math.min(firstMs * 2 ** Math.max(failures - 1, 0), maxMs)
}
