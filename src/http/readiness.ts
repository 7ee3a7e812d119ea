// Whether this instance can answer, as /readyz says it and the service logs it.

import type { Static } from 'typebox'
import type { Views } from '../domain/follow/views.js'
import type { RegistryRun } from '../domain/wire/schemas.js'
import type { Readiness, VerbState } from './schemas.js'

export interface ReadinessDeps {
  views: Views
  writer: { readonly last: RegistryRun | undefined }
  verb: () => VerbState
}

/** Ready when connected, every view is live or its bucket known absent (docs/http.md), and the verb served. */
export function readiness ({ views, writer, verb }: ReadinessDeps): Static<typeof Readiness> {
  const buckets = views.status()
  const connected = views.connected()
  const served = verb()
  return { ready: connected && views.settled() && served === 'serving', connected, server: views.server(), verb: served, buckets, registryWriter: writer.last ?? null }
}
