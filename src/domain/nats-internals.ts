// The one place that reads what nats.js (2.29) keeps but does not export (STYLE 14):
// test/nats-internals.test.ts holds each against a real server, so an upgrade that moves one fails
// there rather than degrading quietly.

import type { Msg, Service } from 'nats'

/** A message's subject and reply subject as the bytes they came in. */
export interface ArrivedBytes {
  subject: Uint8Array
  reply?: Uint8Array
}

/**
 * A message's subject and reply subject before nats.js decodes them to strings (its `MsgImpl`
 * keeps them in `_msg`). The feed reads them there per message: decoding every reply subject, and
 * a key cut from the decoded subject keeping the whole subject alive, cost a large bucket's load.
 */
export function arrivedBytes (msg: Msg): ArrivedBytes {
  return (msg as unknown as { _msg: ArrivedBytes })._msg
}

/**
 * Counts an error reply in an endpoint's own stats (`num_errors`, `last_error` in `$SRV.STATS`):
 * nats.js counts only errors thrown out of a handler, where nats.go counts every error reply it
 * sends (SPEC §4). The stats are the service's `handlers[].stats`, found by the endpoint's name; a
 * nats.js that keeps them elsewhere fails here, at the start, rather than under-count quietly.
 */
export function endpointErrorCounter (service: Service, endpoint: string): (err: Error) => void {
  const endpoints = (service as unknown as { handlers?: Array<{ name?: string, stats?: { countError?: unknown } }> }).handlers
  const stats = endpoints?.find((e) => e.name === endpoint)?.stats
  const countError = stats?.countError
  if (typeof countError !== 'function') throw new Error(`nats.js keeps the stats of endpoint ${endpoint} where src/domain/nats-internals.ts does not find them (\`handlers[].stats.countError\`); error replies would go uncounted`)
  return (err) => { countError.call(stats, err) }
}
