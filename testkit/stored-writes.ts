// Many writes to JetStream as plain publishes, none waiting for its ack, for a test that needs the
// keys written, not the pace of writing them: ~1/7 of the writer's CPU of acked writes (64k keys:
// 0.7 s against 4.9 s). What the streams stored is read from their last sequences.

import type { NatsConnection } from 'nats'

export interface Put { subject: string, data: Uint8Array | string }

/**
 * Publishes `puts` to the subjects of `streams` (their names), a chunk at a time, each chunk sent
 * once the one before the last is stored (the server holds little unstored), and resolves once all
 * are stored; fails, saying so, when the server stores fewer within a minute (it dropped some). Each
 * publish counts once in its stream's last sequence, a key written again too. Nothing else may
 * write to `streams` meanwhile. The number of writes.
 */
export async function writeStored (nc: NatsConnection, puts: Iterable<Put>, streams: readonly string[], chunk = 2000): Promise<number> {
  const jsm = await nc.jetstreamManager()
  const stored = async (): Promise<number> => (await Promise.all(streams.map(async (s) => (await jsm.streams.info(s)).state.last_seq))).reduce((a, b) => a + b, 0)
  const before = await stored()
  const until = async (writes: number): Promise<void> => {
    await nc.flush()
    const deadline = Date.now() + 60_000
    for (let seen = await stored() - before; seen < writes; seen = await stored() - before) {
      if (Date.now() > deadline) throw new Error(`the server stored ${seen} of ${writes} plain publishes within 60 s: it drops them; write with acks (kv.put, js.publish)`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }
  let writes = 0
  for (const put of puts) {
    nc.publish(put.subject, put.data)
    if (++writes % chunk === 0) await until(writes - chunk)
  }
  await until(writes)
  return writes
}
