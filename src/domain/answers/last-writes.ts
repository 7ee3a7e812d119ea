// Each node's last write: the latest `updated` of the entries whose key's first token names it, in
// the buckets its provisioner client writes. Read at scrape time by the node-silent gauge; for now
// one pass over the entries held (~55 ms at 300k entries), made again only when a bucket moved,
// until the views keep per-node aggregates (SPEC §10's nodes).

import type { Views } from '../follow/views.js'
import type { Contents } from '../store/contents.js'

const CLIENT_BUCKETS = ['needs', 'applied', 'collect'] as const

/** The latest write time (epoch ms) of each node named by the entries of `buckets`. */
export function lastWrites (buckets: Iterable<Contents>): Map<string, number> {
  const latest = new Map<string, number>()
  for (const { entries } of buckets) {
    for (let slot = 0; slot < entries.keys.size; slot++) {
      if (!entries.holds(slot)) continue
      const key = entries.keys.keyAt(slot)
      // An entry's key fits its bucket's shape: its first token is the node.
      const node = key.slice(0, key.indexOf('.'))
      const at = entries.updatedAt(slot)
      if (at > (latest.get(node) ?? -Infinity)) latest.set(node, at)
    }
  }
  return latest
}

/** Each node's last write over the live views of the client buckets (`views` is read at the call), read again only after one of them moved. */
export function lastWritesOf (views: () => Views): () => Map<string, number> {
  let held: { at: string, latest: Map<string, number> } | undefined
  return () => {
    const live = CLIENT_BUCKETS.map((what) => views().byWhat[what]).filter((view) => view.status().state === 'live').map((view) => view.read())
    const at = live.map((c) => `${c.what} ${c.generation} ${c.revision}`).join(',')
    if (held?.at !== at) held = { at, latest: lastWrites(live) }
    return held.latest
  }
}
