// The `data:` of each event an event stream sends (SPEC §8), beside the entries and out-of-shape
// keys it shares with answers: for the AsyncAPI document, which tests hold real events to.

import { Type, type TSchema } from 'typebox'
import type { What } from '../domain/wire/key-shapes.js'
import { Answers, EntrySchemas, OutOfShape } from '../domain/wire/schemas.js'

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
