// Writes to the client buckets that return once the service's view has read them, so that a test
// asks about a state the service holds (waiting on a condition, never on a fixed sleep).

import type { KV } from 'nats'
import { expect, vi } from 'vitest'
import type { What } from '../../src/domain/wire/key-shapes.js'
import type { Running } from '../../src/service.js'

type ClientBucket = Exclude<What, 'registry'>

/** Waits until `running`'s view of bucket `what` has read up to `revision`. */
export async function viewReached (running: Running, what: What, revision: number): Promise<void> {
  await vi.waitFor(() => expect(running.views.byWhat[what].status().revision).toBeGreaterThanOrEqual(revision), { timeout: 5000, interval: 10 })
}

/** put and remove on `kv()`, each waiting until `running()`'s view of the bucket has reached it (read when called: a suite sets both in beforeAll). */
export function seenWrites (kv: () => Record<ClientBucket, KV>, running: () => Running): {
  put: (what: ClientBucket, key: string, value?: string) => Promise<number>
  remove: (what: ClientBucket, key: string) => Promise<void>
} {
  const reached = async (what: ClientBucket, revision: number): Promise<void> => { await viewReached(running(), what, revision) }
  return {
    put: async (what, key, value = '{}') => {
      const revision = await kv()[what].put(key, value)
      await reached(what, revision)
      return revision
    },
    remove: async (what, key) => {
      await kv()[what].delete(key)
      await reached(what, (await kv()[what].status()).streamInfo.state.last_seq)
    }
  }
}
