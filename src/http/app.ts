// Builds the REST gateway from its dependencies; never listens (main does).

import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { Provisioning } from '../domain/provisioning.js'
import type { RegistryRun } from '../domain/registry-writer.js'
import type { Views } from '../domain/views.js'
import type { Metrics } from '../metrics.js'

export interface AppDeps {
  provisioning: Provisioning
  views: Views
  writer: { readonly last: RegistryRun | undefined }
  metrics: Metrics
  log: FastifyBaseLogger
  corsOrigins: readonly string[]
  version: string
}

export async function buildApp (deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({ loggerInstance: deps.log })
  app.get('/healthz', async () => ({ ok: true }))
  return app
}
