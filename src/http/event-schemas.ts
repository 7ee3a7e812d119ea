// The `data:` of each event an event stream sends (SPEC §8), beside the entries and out-of-shape
// keys it shares with answers: for the AsyncAPI document, which tests hold real events to, and the
// OpenAPI document's components, from which clients' types are made.

import { Type } from 'typebox'

export const Synced = Type.Object({
  cursor: Type.String({ description: 'The cursor the stream has caught up to; the event\'s `id:` too.' }),
  total: Type.Integer({ description: 'How many entries match the filter now.' }),
  stale: Type.Boolean({ description: 'True while the view answers from what it last knew.' })
}, { description: '`synced`: the snapshot, or the changes missed since `Last-Event-ID`, are complete.', $id: 'SyncedEvent' })

const reason = ($id: string, description: string) => Type.Object({
  reason: Type.String({ description: 'Why, in words.' })
}, { description, $id })

export const Stale = reason('StaleEvent', '`stale`: cut off from NATS, the bucket missing or loading, or being read again; the stream goes on (or its snapshot follows) when it can.')
export const Live = reason('LiveEvent', '`live`: followed live again after `stale`.')
export const Reset = reason('ResetEvent', '`reset`: the cursor cannot be served (malformed, another generation of the bucket, or older than the deletions known) or the bucket was created again: forget what was received; a fresh snapshot and `synced` follow.')

/** The data schemas of the events that are not entries, for the OpenAPI document's components too (typed clients read them). */
export const EVENT_SCHEMAS = [Synced, Stale, Live, Reset]
