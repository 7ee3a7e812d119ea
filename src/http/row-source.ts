// The rows of the mesh at a glance as what a stream follows (docs/glance.md "Live rows"): the
// domain's live rows (answers/live-rows.ts) behind the same follower, framing, bounds and shares as
// a bucket's change feed. Its cursors name every bucket the rows read; the rows changed after one
// are sent latest per row, each but the last with the cursor it was read after as id, so that a
// stream cut within them resumes by reading them all again.

import type { OverviewRequest } from '../domain/wire/request.js'
import type { What } from '../domain/wire/key-shapes.js'
import { BUCKETS } from '../domain/wire/key-shapes.js'
import type { Following } from '../domain/answers/waiters.js'
import { viewState, type FollowerDeps, type SharedBatch, type State, type StreamSource } from './stream-of-request.js'

/** The part of a row cursor naming the buckets' generations. */
const generationOf = (cursor: string): string => cursor.slice(cursor.lastIndexOf('-') + 1)

export class RowSource implements StreamSource {
  readonly requestKey: string
  readonly liveReason: string
  readonly goneReason = 'a bucket the rows read went away during the snapshot'
  /** The buckets whose views must be live for the rows to be. */
  private readonly buckets: readonly What[]

  constructor (private readonly deps: FollowerDeps, private readonly overviewRequest: OverviewRequest) {
    this.requestKey = JSON.stringify([overviewRequest.what, overviewRequest.filter])
    this.buckets = overviewRequest.what === 'nodes' ? ['needs', 'applied', 'collect'] : ['needs', 'applied']
    this.liveReason = `buckets ${this.buckets.map((b) => BUCKETS[b]).join(', ')} are followed live`
  }

  listen (wake: () => void, position: string | undefined): Following {
    return this.deps.provisioning.overviews.live.follow(this.overviewRequest, position, wake)
  }

  state (): State {
    for (const what of this.buckets) {
      const state = viewState(this.deps.views, what)
      if (!state.live) return state
    }
    return { live: true }
  }

  readable (): boolean {
    return this.buckets.every((what) => this.deps.views.status(what).state === 'live')
  }

  /** Any id is taken: one the rows cannot serve is refused when they are read, and a snapshot follows. */
  resumeFrom (id: string): string {
    return id
  }

  async catchUp (): Promise<void> {}

  snapshot (after: string | undefined, limit: number): ReturnType<StreamSource['snapshot']> {
    return { ...this.deps.provisioning.overviews.live.snapshot(this.overviewRequest, after, limit), outOfShape: [] }
  }

  sameGeneration (a: string, b: string): boolean {
    return generationOf(a) === generationOf(b)
  }

  readState (): object {
    return this.deps.provisioning.overviews.live.state(this.overviewRequest)
  }

  changes (since: string): SharedBatch {
    const { changes, cursor } = this.deps.provisioning.overviews.live.changes(this.overviewRequest, since)
    return { changes, ids: changes.map((_, i) => i === changes.length - 1 ? cursor : since), cursor, more: false, next: cursor }
  }

  count (): { total: number, stale: boolean } {
    return this.deps.provisioning.overviews.live.count(this.overviewRequest)
  }
}
