// Whether the connection to NATS is up, as its status events say: the views and the registry
// writer each act on a loss and on a reconnect.

import type { NatsConnection } from 'nats'

/** Calls `changed(false)` when the connection to NATS is lost and `changed(true)` when it is back, until it closes. */
export function followConnection (nc: NatsConnection, changed: (connected: boolean) => void): void {
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect') changed(s.type === 'reconnect')
    }
  })()
}
