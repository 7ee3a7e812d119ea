// The registry writer's schedule as the connection's status moves it (test/faults.test.ts holds it
// against a real nats-server killed and restarted; these hold the orders a real outage cannot time).

import type { KV } from 'nats'
import { afterEach, expect, test, vi } from 'vitest'
import { RegistryWriter } from './registry-writer.js'

const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} }
const writers: RegistryWriter[] = []
/** The opens still waiting: failed at each test's end, so that a stop's wait for the run under way ends. */
const pending: Array<(err: Error) => void> = []
afterEach(async () => {
  const stopped = writers.splice(0).map(async (w) => { await w.stop() })
  for (const fail of pending.splice(0)) fail(new Error('the test ended'))
  await Promise.all(stopped)
})

/** A writer whose every open waits for the test to fail it; retries an hour apart, so that only the connection can bring one sooner. */
function writerWithOpens (): { writer: RegistryWriter, opens: Array<(err: Error) => void> } {
  const opens: Array<(err: Error) => void> = []
  const writer = new RegistryWriter({
    open: async () => await new Promise<KV>((_resolve, reject) => { opens.push(reject); pending.push(reject) }),
    compiled: new Map(),
    intervalMs: 3_600_000,
    retryMs: 3_600_000,
    log: silent
  })
  writers.push(writer)
  return { writer, opens }
}

test('while NATS is away a run fails at once, naming why', async () => {
  const { writer, opens } = writerWithOpens()
  writer.setConnected(false)
  const run = await writer.run()
  expect(run).toMatchObject({ ok: false, error: expect.stringMatching(/NATS is not connected/) })
  expect(opens).toHaveLength(0)
})

test('a failed run is tried again as soon as NATS is back, not after its backoff', async () => {
  const { writer, opens } = writerWithOpens()
  const first = writer.run()
  await vi.waitFor(() => { expect(opens).toHaveLength(1) })
  opens[0]?.(new Error('timeout'))
  expect((await first).ok).toBe(false)
  writer.setConnected(false)
  writer.setConnected(true)
  await vi.waitFor(() => { expect(opens).toHaveLength(2) })
})

test('a run under way when NATS comes back, and failing after, is tried again at once', async () => {
  const { writer, opens } = writerWithOpens()
  const first = writer.run()
  await vi.waitFor(() => { expect(opens).toHaveLength(1) })
  writer.setConnected(false)
  writer.setConnected(true)
  // Its requests went out while NATS was away: it fails after the reconnect.
  opens[0]?.(new Error('timeout'))
  expect((await first).ok).toBe(false)
  await vi.waitFor(() => { expect(opens).toHaveLength(2) })
})

test('NATS back after a run that succeeded brings no run sooner than the period', async () => {
  let opened = 0
  const emptyBucket = { keys: async () => (async function * () {})() } as unknown as KV
  const writer = new RegistryWriter({ open: async () => { opened++; return emptyBucket }, compiled: new Map(), intervalMs: 3_600_000, log: silent })
  writers.push(writer)
  expect((await writer.run()).ok).toBe(true)
  writer.setConnected(false)
  writer.setConnected(true)
  // A run the reconnect brought would be due now (a timer of 0 ms), before this one.
  await new Promise((resolve) => setTimeout(resolve, 0))
  await new Promise((resolve) => setImmediate(resolve))
  expect(opened).toBe(1)
})
