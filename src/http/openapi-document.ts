// The OpenAPI document as committed in openapi/openapi.json: built from the same app the service
// runs, with inert dependencies (only the route definitions are read), as stable pretty JSON.

import { pino } from 'pino'
import type { Provisioning } from '../domain/answers/provisioning.js'
import type { Views } from '../domain/follow/views.js'
import type { Metrics } from '../metrics.js'
import { buildApp } from './app.js'

/** Stands in for a dependency that building the document never calls; says so if it is called. */
function inert<T extends object> (name: string): T {
  return new Proxy({}, { get: (_target, property) => { throw new Error(`the OpenAPI document is built without a service (${name}.${String(property)})`) } }) as T
}

export async function openApiText (version: string): Promise<string> {
  const app = await buildApp({
    provisioning: inert<Provisioning>('provisioning'),
    views: inert<Views>('views'),
    writer: { last: undefined },
    metrics: inert<Metrics>('metrics'),
    log: pino({ level: 'silent' }),
    corsOrigins: [],
    version,
    maxAnswerBytes: () => 0,
    verb: () => 'starting'
  })
  try {
    await app.ready()
    return `${JSON.stringify(await app.openapi(), null, 2)}\n`
  } finally {
    await app.close()
  }
}
