// The nats-server versions whose defects lose or stall what a view reads, and what the views do
// about each: the one place that knows them (docs/architecture.md#what-nats-does-here measured them on 2.9.10). The num_pending
// that 2.9.10 overstates needs no version: no load reads it (kv-feed.ts).

import type { ServerDefect } from '../wire/schemas.js'

/** `[major, minor, patch]` of a version such as `2.9.10` or `2.10.27-beta`; undefined when it is not one. */
function parts (version: string): [number, number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version)
  return m === null ? undefined : [Number(m[1]), Number(m[2]), Number(m[3])]
}

function before (version: string, fixed: string): boolean {
  const v = parts(version)
  const f = parts(fixed) as [number, number, number]
  if (v === undefined) return false
  for (let i = 0; i < 3; i++) if (v[i] !== f[i]) return (v[i] as number) < (f[i] as number)
  return false
}

/**
 * The data-loss defect of the server, if its version has one: before 2.9.12 a purge of one key
 * moves every consumer of the bucket past the messages it has not yet delivered (nats-server#3838).
 * An unknown version has none that the service knows of.
 */
export function purgeDefect (version: string | undefined): ServerDefect | undefined {
  if (version === undefined || !before(version, '2.9.12')) return undefined
  return {
    server: version,
    defect: 'a purge of one key moves every consumer of the bucket past the changes it has not yet delivered, so a view can miss them for good; the service reads a bucket again after every purge that came after a gap, answering from what it held, marked stale, meanwhile',
    issue: 'https://github.com/nats-io/nats-server/pull/3838',
    fixedIn: '2.9.12'
  }
}
