// Each node's last write: the latest `updated` of the entries whose key's first token names it, in
// the buckets its provisioner client writes. Read at scrape time by the node-silent gauge; for now
// one pass over the entries held, until the views keep per-node aggregates (SPEC §10's nodes).

import type { Contents } from '../store/contents.js'

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
