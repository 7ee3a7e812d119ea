// What a bucket holds, read afresh from NATS the way a client without the service would: every key
// (kv.keys, collected before any await: docs/architecture.md#what-nats-does-here) and each key's last value by direct get. The
// tests compare what the service answers with it, key for key, revision for revision.

import type { KV } from 'nats'
import { request } from 'undici'

/** Each key that holds a value, with the revision that wrote it. */
export async function freshRead (kv: KV): Promise<Map<string, number>> {
  const keys: string[] = []
  for await (const k of await kv.keys()) keys.push(k)
  const out = new Map<string, number>()
  // A few gets in flight at a time: thousands at once would only queue in the server.
  for (let i = 0; i < keys.length; i += 64) {
    const got = await Promise.all(keys.slice(i, i + 64).map(async (k) => await kv.get(k)))
    for (const e of got) if (e !== null && e.operation === 'PUT') out.set(e.key, e.revision)
  }
  return new Map([...out].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0))
}

/** A list answer's entries and out-of-shape keys as one map, key to revision, sorted by key. */
export function heldBy (answer: { entries: Array<{ key: string, revision: number }>, outOfShape: Array<{ key: string, revision: number }> }): Map<string, number> {
  return new Map([...answer.entries, ...answer.outOfShape].map((e): [string, number] => [e.key, e.revision]).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0))
}

/** A list read whole over HTTP, page after page by `next`: key to revision, sorted by key. */
export async function listed (url: string, what: 'needs' | 'applied' | 'collect'): Promise<Map<string, number>> {
  const held = new Map<string, number>()
  let after: string | undefined
  for (;;) {
    const res = await request(`${url}/v1/${what}?limit=10000${after === undefined ? '' : `&after=${encodeURIComponent(after)}`}`)
    const page = await res.body.json() as { entries: Array<{ key: string, revision: number }>, outOfShape: Array<{ key: string, revision: number }>, next?: string }
    if (res.statusCode !== 200) throw new Error(`GET /v1/${what}: ${res.statusCode} ${JSON.stringify(page)}`)
    for (const [key, revision] of heldBy(page)) held.set(key, revision)
    if (page.next === undefined) break
    after = page.next
  }
  return new Map([...held].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0))
}
