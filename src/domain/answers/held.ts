// A request held until what it waits for happens: the one shape of every held wait (the bucket
// requests' waiters, the overview's groups), so that a timeout, an abort and letting go are
// written once.

/**
 * Resolves when `hold` calls `wake`, after `ms`, or when `signal` aborts; then lets go every hold
 * `hold` pushed to `held` (each a function that takes it out of what holds it). `hold` may wake
 * at once (the news was already there): what it pushed before is let go all the same.
 */
export async function heldUntil (ms: number, signal: AbortSignal | undefined, hold: (wake: () => void, held: Array<() => void>) => void): Promise<void> {
  const held: Array<() => void> = []
  try {
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      signal?.addEventListener('abort', done)
      if (signal?.aborted === true) return done()
      hold(done, held)
    })
  } finally {
    for (const letGo of held) letGo()
  }
}
