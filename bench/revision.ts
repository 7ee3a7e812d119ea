// The revision an answer of the verb states, read off its first bytes rather than parsing the whole
// answer: the bench asks again and again until a write shows, and every answer's head carries it.

const decoder = new TextDecoder()

/** The `revision` of an answer's head (NaN when it has none there). */
export function revisionIn (answer: Uint8Array): number {
  return Number(/"revision":(\d+)/.exec(decoder.decode(answer.subarray(0, 200)))?.[1])
}
