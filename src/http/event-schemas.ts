// The `data:` of each event an event stream sends (docs/following-changes.md), beside the entries and out-of-shape
// keys it shares with answers: for the AsyncAPI document, which tests hold real events to.

import type { TSchema } from 'typebox'
import { Type } from '../vendor/typebox.js'
import type { What } from '../domain/wire/key-shapes.js'
import { Answers, EntrySchemas, ModuleRow, NodeRow, OutOfShape, type Overview } from '../domain/wire/schemas.js'

export const Synced = Type.Object({
  cursor: Type.String({ description: 'The cursor the stream has caught up to; the event\'s `id:` too.' }),
  total: Type.Integer({ description: 'How many entries match the filter now.' }),
  stale: Type.Boolean({ description: 'True while the view answers from what it last knew.' })
}, { description: '`synced`: the snapshot, or the changes missed since `Last-Event-ID`, are complete.' })

const reason = (description: string) => Type.Object({
  reason: Type.String({ description: 'Why, in words.' })
}, { description })

export const Stale = reason('`stale`: cut off from NATS, the bucket missing or loading, or being read again; the stream goes on (or its snapshot follows) when it can.')
export const Live = reason('`live`: followed live again after `stale`.')
export const Reset = reason('`reset`: the cursor cannot be served (malformed, another generation of the bucket, or older than the deletions known) or the bucket was created again: forget what was received; a fresh snapshot and `synced` follow.')

/** The data of each event of a `what`'s stream, by the event's name: the one list of a stream's events. */
export function eventData (what: What) {
  const deleted = (Answers[what].properties.deleted as unknown as { items: TSchema }).items
  return { put: EntrySchemas[what], outOfShape: OutOfShape, delete: deleted, synced: Synced, stale: Stale, live: Live, reset: Reset }
}

export type StreamEvent = keyof ReturnType<typeof eventData>

/** A row that left a live rows stream's filter. */
export const RowDeleted = {
  nodes: Type.Object({
    node: Type.String({ description: 'The node whose row left: no key names it any more.' })
  }, { additionalProperties: false, description: '`delete`: a node row the filter no longer keeps; a client ignores one for a row it does not hold.' }),
  modules: Type.Object({
    node: Type.String({ description: 'The node.' }),
    module: Type.String({ description: 'The module whose row left: neither needs nor applied holds it any more, or its state left those `state` takes.' })
  }, { additionalProperties: false, description: '`delete`: a module row the filter no longer keeps; a client ignores one for a row it does not hold.' })
}

export const RowsSynced = Type.Object({
  cursor: Type.String({ description: 'The point of every bucket the rows read that the stream has caught up to; the event\'s `id:` too.' }),
  total: Type.Integer({ description: 'How many rows the filter keeps now.' }),
  stale: Type.Boolean({ description: 'True while a view the rows read answers from what it last knew.' })
}, { description: '`synced`: the snapshot, or the rows changed since `Last-Event-ID`, are complete.' })

/** The data of each event of a live rows stream, by the event's name. */
export function rowEventData (what: Overview) {
  return { put: what === 'nodes' ? NodeRow : ModuleRow, delete: RowDeleted[what], synced: RowsSynced, stale: Stale, live: Live, reset: Reset }
}
