// What the answers read of the views (follow/views.ts gives more): each bucket's contents, whether
// they are stale, their state and their signals. A test gives these four and nothing else.

import type { What } from '../wire/key-shapes.js'
import type { ViewStatus } from '../wire/schemas.js'
import type { Followed } from './waiters.js'

/** One bucket's view as the answers read it: a follow/bucket-view.ts BucketView is one. */
export interface AnsweredView extends Followed {
  /** Whether the contents may lag the bucket (the feed is down or behind). */
  readonly stale: boolean
  status: () => Pick<ViewStatus, 'state'>
}

/** The views the answers ask: follow/views.ts's Views is one. */
export interface AnsweredViews {
  readonly byWhat: Readonly<Record<What, AnsweredView>>
}
