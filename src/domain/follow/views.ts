// The four views together, following the connection: stale while it is down, resumed at once when
// it comes back (rather than after the client library's own ~12 s heartbeat check).

import type { NatsConnection } from 'nats'
import { WHATS, type What } from '../wire/key-shapes.js'
import type { Logger } from '../logger.js'
import type { Static } from 'typebox'
import type { NatsServerStatus, ViewStatus } from '../wire/schemas.js'
import { BucketView } from './bucket-view.js'
import { followConnection } from './connection.js'
import { purgeDefect } from './server-defects.js'
import { defined } from '../defined.js'

export interface Views {
  readonly byWhat: Readonly<Record<What, BucketView>>
  /** True while the NATS connection is up. */
  connected (): boolean
  /** The nats-server the connection is on now, and its known defect. */
  server (): Static<typeof NatsServerStatus>
  status (): Record<What, ViewStatus>
  /** Every view read whole (live) or its bucket known absent: the instance can answer every request. */
  settled (): boolean
  /** Resolves at the first state signal after which every view is settled (at once if they are). */
  untilSettled (): Promise<void>
  stop (): Promise<void>
}

export interface ViewsOptions {
  nc: NatsConnection
  log: Logger
  /** The connection's inbox prefix (src/nats.ts gives it to the connection too), for the feeds' inboxes. */
  inboxPrefix?: string
  /** The registry's view starts once this settles (the writer's first run, which creates its bucket); the others at once. */
  registryAfter?: Promise<unknown>
  retryMs?: number
  checkMs?: number
}

export async function createViews ({ nc, log, inboxPrefix, registryAfter, retryMs, checkMs }: ViewsOptions): Promise<Views> {
  // A JetStream call that meets no stream leader (a cluster electing one) is tried again sooner
  // than the client's default 5 s allows.
  const jsm = await nc.jetstreamManager({ timeout: 2000 })
  const byWhat = Object.fromEntries(WHATS.map((what) => [what, new BucketView({
    what,
    nc,
    jsm,
    log,
    inboxPrefix,
    ...defined({ retryMs, checkMs })
  })])) as Record<What, BucketView>
  let connected = !nc.isClosed()
  const all = Object.values(byWhat)
  followConnection(nc, (now) => {
    connected = now
    for (const view of all) view.setConnected(now)
  })
  for (const view of all) if (view.what !== 'registry' || registryAfter === undefined) view.start()
  void registryAfter?.finally(() => { byWhat.registry.start() })
  const status = (): Record<What, ViewStatus> => Object.fromEntries(WHATS.map((w) => [w, byWhat[w].status()])) as Record<What, ViewStatus>
  const settled = (): boolean => Object.values(status()).every((s) => s.state === 'live' || s.state === 'absent')
  return {
    byWhat,
    connected: () => connected,
    server: () => {
      const version = nc.info?.version
      return { version: version ?? null, defect: purgeDefect(version) ?? null }
    },
    status,
    settled,
    untilSettled: async () => {
      if (settled()) return
      await new Promise<void>((resolve) => {
        const stops = all.map((view) => view.listen((signal) => {
          if (signal !== 'state' || !settled()) return
          for (const stop of stops) stop()
          resolve()
        }))
      })
    },
    stop: async () => {
      await Promise.all(all.map((v) => v.stop()))
    }
  }
}
