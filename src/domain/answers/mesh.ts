// The buckets an overview reads and its filter: shared by the overviews, their waiters and their
// live rows, in a leaf module so that none of them imports another for it.

import type { OverviewRequest } from '../wire/request.js'
import type { Contents } from '../store/contents.js'
import type { AnsweredViews } from './port.js'
import type { Mesh } from './rows.js'

/** Whether a filter keeps a row's field value (a request's filter, whatever it holds). */
export function keeps (filter: OverviewRequest['filter'], field: string, value: string): boolean {
  const wanted = filter[field]
  return wanted === undefined || wanted.includes(value)
}

type Bucket = 'needs' | 'applied' | 'collect'

/** The buckets an overview reads, each refusing as its own answers do; the registry when it can be read. */
export function readMesh (views: AnsweredViews, buckets: readonly Bucket[]): Mesh {
  // Each refuses as its own answers do: a missing or loading bucket is named.
  const held = Object.fromEntries(buckets.map((b) => [b, views.byWhat[b].read()]))
  // A registry that cannot be read answers no kind: every need stands unanswered until it can.
  let registry: Contents | undefined
  try {
    registry = views.byWhat.registry.read()
  } catch {}
  return { ...held, registry, stale: buckets.some((b) => views.byWhat[b].stale) } as unknown as Mesh
}

export const bucketsOf = (request: OverviewRequest): Bucket[] => request.what === 'nodes' ? ['needs', 'applied', 'collect'] : ['needs', 'applied']
