// Wires the process: one NATS connection, the four views, the queries over them, and the three
// faces (verb, gateway, registry writer). Stops in reverse order. Used by main, the demo and tests.

import { readFileSync } from 'node:fs'
import type { Server as TlsServer } from 'node:tls'
import type { NatsConnection } from 'nats'
import type { Logger as PinoLogger } from 'pino'
import { startBus, type Bus } from './bus/service.js'
import type { Config } from './config.js'
import { BUCKETS } from './domain/buckets.js'
import { createProvisioning, type Provisioning } from './domain/provisioning.js'
import { compileRegistry } from './domain/registry.js'
import { RegistryWriter } from './domain/registry-writer.js'
import { createViews, type Views } from './domain/views.js'
import { buildApp } from './http/app.js'
import { loadTls } from './http/tls.js'
import { parseTokens, type Token } from './http/tokens.js'
import { createMetrics, type Metrics } from './metrics.js'
import { connectNats } from './nats.js'
import type { FastifyInstance } from 'fastify'

export interface Running {
  nc: NatsConnection
  views: Views
  provisioning: Provisioning
  writer: RegistryWriter
  bus: Bus
  app: FastifyInstance
  metrics: Metrics
  /** Where the gateway listens, e.g. http://127.0.0.1:8080. */
  url: string
  /**
   * SIGHUP: reads the tokens file and the certificate again. A file that will not do leaves what
   * was read before in use and says why in a warning; it never stops the service.
   */
  reload (): void
  stop (): Promise<void>
}

const readText = (path: string): string => readFileSync(path, 'utf8')

export interface ServiceOptions {
  config: Readonly<Config>
  log: PinoLogger
  version: string
  /** Timings for tests: how often views look for a missing bucket and check a live one (ms). */
  viewRetryMs?: number
  viewCheckMs?: number
  registryRetryMs?: number
}

export async function startService ({ config, log, version, viewRetryMs, viewCheckMs, registryRetryMs }: ServiceOptions): Promise<Running> {
  const nc = await connectNats(config.nats, log)
  const js = nc.jetstream()
  const metrics = createMetrics(() => views)
  const writer = new RegistryWriter({
    // allow_direct: a bucket only bound (not created here) would otherwise read through the
    // stream's message API, a grant the service does not need.
    open: async () => await js.views.kv(BUCKETS.registry, { bindOnly: !config.registry.createBucket, allow_direct: true, replicas: config.registry.replicas, history: 1 }),
    compiled: compileRegistry(config.registry.domains),
    intervalMs: config.registry.intervalMs,
    ...(registryRetryMs === undefined ? {} : { retryMs: registryRetryMs }),
    log,
    onRun: (run) => metrics.registryRun(run)
  })
  // The first run creates the registry bucket, so its view starts live rather than absent; a run
  // that fails is retried on the writer's own schedule while the rest starts.
  await writer.run()
  const views = await createViews({
    nc,
    log,
    ...(viewRetryMs === undefined ? {} : { retryMs: viewRetryMs }),
    ...(viewCheckMs === undefined ? {} : { checkMs: viewCheckMs })
  })
  const provisioning = createProvisioning(views)
  const bus = await startBus({ nc, provisioning, subject: config.subject, version, log, metrics })
  let tokens: readonly Token[] = config.http.tokens ?? []
  const tlsFiles = config.http.tls
  const app = await buildApp({
    provisioning,
    views,
    writer,
    metrics,
    log,
    corsOrigins: config.http.corsOrigins,
    version,
    maxAnswerBytes: () => nc.info?.max_payload ?? 1024 * 1024,
    ...(config.http.tokensFile === undefined ? {} : { tokens: () => tokens }),
    ...(tlsFiles === undefined ? {} : { https: loadTls(tlsFiles, readText) })
  })
  const url = await app.listen({ host: config.http.host, port: config.http.port })
  log.info({ url, subject: config.subject }, 'mesh-provisioner serving')

  return {
    nc,
    views,
    provisioning,
    writer,
    bus,
    app,
    metrics,
    url,
    reload () {
      const tokensFile = config.http.tokensFile
      if (tokensFile !== undefined) {
        try {
          tokens = parseTokens(readText(tokensFile), tokensFile)
          log.info({ tokenNames: tokens.map((t) => t.name) }, 'HTTP_TOKENS_FILE read again')
        } catch (err) {
          log.warn(`HTTP_TOKENS_FILE not read again, the tokens read before stay: ${(err as Error).message}`)
        }
      }
      if (tlsFiles !== undefined) {
        try {
          (app.server as unknown as TlsServer).setSecureContext(loadTls(tlsFiles, readText))
          log.info({ cert: tlsFiles.certFile }, 'HTTP_TLS_CERT and HTTP_TLS_KEY read again')
        } catch (err) {
          log.warn(`the certificate was not read again, the one read before stays: ${(err as Error).message}`)
        }
      }
    },
    async stop () {
      await writer.stop()
      await bus.stop()
      await app.close()
      await views.stop()
      if (!nc.isClosed()) await nc.drain()
    }
  }
}
