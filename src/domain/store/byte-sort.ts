// Sorts keys held as bytes in slabs (key-table.ts) without making a string of any: a multikey
// quicksort (Bentley and Sedgewick, "Fast algorithms for sorting and searching strings", 1997),
// which partitions on a few bytes at a time and reads a shared prefix once per partition, not once
// per comparison. At 3M keys the native sort of tagged strings made 3M strings that all survived:
// the scavenges copying them and the mark-compacts marking them cost more than the sort itself
// (bench/RESULTS.md).

/** Ranges this short are sorted by insertion, comparing the rest of their keys. */
const SHORT = 12

/** Where the keys are read: key k's bytes, all ASCII (as the key table holds them), are `bytes[slabOf[k]]` from `starts[k]`, `lengths[k]` of them. */
export interface ByteKeys {
  readonly bytes: readonly Uint8Array[]
  readonly slabOf: Int32Array
  readonly starts: Int32Array
  readonly lengths: Int32Array
}

/**
 * Bytes read at once: a key's next WORD bytes as one number, each byte as itself + 1 and 0 past the
 * key's end, in base 129 (keys are ASCII), so that numbers order as the bytes do and a key before
 * every key it is a prefix of. 129^7 is below 2^53: every such number is exact in a double.
 */
const WORD = 7
const BASE = 129

/** Key k's WORD bytes from `depth`, as one number in their order. */
function wordAt (keys: ByteKeys, k: number, depth: number): number {
  const bytes = keys.bytes[keys.slabOf[k] as number] as Uint8Array
  const start = (keys.starts[k] as number) + depth
  const end = Math.min(start + WORD, (keys.starts[k] as number) + (keys.lengths[k] as number))
  let word = 0
  let i = start
  for (; i < end; i++) word = word * BASE + (bytes[i] as number) + 1
  for (; i < start + WORD; i++) word *= BASE
  return word
}

/** The sign of key a against key b, both known equal before `depth`. */
function compareFrom (keys: ByteKeys, a: number, b: number, depth: number): number {
  const la = keys.lengths[a] as number
  const lb = keys.lengths[b] as number
  const sa = keys.bytes[keys.slabOf[a] as number] as Uint8Array
  const sb = keys.bytes[keys.slabOf[b] as number] as Uint8Array
  const oa = keys.starts[a] as number
  const ob = keys.starts[b] as number
  const n = Math.min(la, lb)
  for (let d = depth; d < n; d++) {
    const diff = (sa[oa + d] as number) - (sb[ob + d] as number)
    if (diff !== 0) return diff
  }
  return la - lb
}

function insertionSort (order: Int32Array, lo: number, hi: number, keys: ByteKeys, depth: number): void {
  for (let i = lo + 1; i < hi; i++) {
    const k = order[i] as number
    let j = i
    while (j > lo && compareFrom(keys, order[j - 1] as number, k, depth) > 0) {
      order[j] = order[j - 1] as number
      j--
    }
    order[j] = k
  }
}

/**
 * Puts `order` (key numbers of `keys`, no two keys equal) in the keys' byte order. Ranges wait on
 * a stack of their own: the equal part of a partition goes WORD bytes deeper, so a recursion would
 * be as deep as the longest shared prefix allows.
 */
export function sortByBytes (order: Int32Array, keys: ByteKeys): void {
  // Each key's word at the depth its range is at, moved with it: a partition compares numbers and
  // reads a key's bytes again only when its range goes WORD bytes deeper. The loops over a range
  // are functions of their own: a loop inside this one ran in on-stack-replaced code that was
  // thrown away at each exit of the inner loop (--trace-deopt: hundreds a sort).
  const words = new Float64Array(order.length)
  readWords(order, words, keys, 0, order.length, 0)
  const stack: number[] = [0, order.length, 0]
  while (stack.length > 0) {
    let depth = stack.pop() as number
    let hi = stack.pop() as number
    let lo = stack.pop() as number
    while (hi - lo > 1) {
      if (hi - lo < SHORT) {
        insertionSort(order, lo, hi, keys, depth)
        break
      }
      const lt = partition(order, words, lo, hi)
      const gt = equalEnd
      if (lt - lo > 1) stack.push(lo, lt, depth)
      if (hi - gt > 1) stack.push(gt, hi, depth)
      // [lo, lt) is below the pivot's word, [lt, gt) equal to it, [gt, hi) above it. The equal keys
      // go deeper; a key that ends in this word is alone there, as keys are distinct.
      lo = lt
      hi = gt
      depth += WORD
      readWords(order, words, keys, lo, hi, depth)
    }
  }
}

/** Reads the words at `depth` of the keys in [lo, hi) of the order. */
function readWords (order: Int32Array, words: Float64Array, keys: ByteKeys, lo: number, hi: number, depth: number): void {
  for (let i = lo; i < hi; i++) words[i] = wordAt(keys, order[i] as number, depth)
}

/**
 * Where the last partition's keys equal to its pivot end. A variable, and no work after the
 * partition's loop: the optimized partition met the code after its loop with no type feedback
 * (that code had only run optimized) and was thrown away at the end of each call, an array's store
 * or an addition alike (--trace-deopt: hundreds a sort).
 */
let equalEnd = 0

/**
 * Partitions [lo, hi) around the word of its middle key: below it, then equal to it, then above
 * it. Gives where the equal keys start; `equalEnd` is where they end.
 */
function partition (order: Int32Array, words: Float64Array, lo: number, hi: number): number {
  const pivot = words[lo + ((hi - lo) >> 1)] as number
  let lt = lo
  let gt = hi
  let i = lo
  while (i < gt) {
    const w = words[i] as number
    if (w < pivot) {
      swap(order, words, i++, lt++)
    } else if (w > pivot) {
      swap(order, words, i, --gt)
    } else i++
  }
  equalEnd = gt
  return lt
}

function swap (order: Int32Array, words: Float64Array, a: number, b: number): void {
  const k = order[a] as number
  order[a] = order[b] as number
  order[b] = k
  const w = words[a] as number
  words[a] = words[b] as number
  words[b] = w
}
