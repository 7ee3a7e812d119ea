// Wires the process: one NATS connection, the four views, the answers read from them, and the three
// faces (verb, gateway, registry writer). Stops in reverse order. Used by main, the demo and tests.

import { readFileSync } from 'node:fs'
import type { Server as TlsServer } from 'node:tls'
import type { NatsConnection } from 'nats'
import type { Logger as PinoLogger } from 'pino'
import { startBus, type Bus } from './bus/service.js'
import type { Config } from './config.js'
import { BUCKETS } from './domain/wire/key-shapes.js'
import { createProvisioning, type Provisioning } from './domain/answers/provisioning.js'
import { compileRegistry } from './domain/registry/registry.js'
import { RegistryWriter } from './domain/registry/registry-writer.js'
import { createViews, type Views } from './domain/follow/views.js'
import { followConnection } from './domain/follow/connection.js'
import { StartError } from './start-error.js'
import { buildApp } from './http/app.js'
import { connectionBound } from './http/holds.js'
import { readiness } from './http/readiness.js'
import type { VerbState } from './http/schemas.js'
import { loadTls } from './settings/tls-files.js'
import { parseTokens, type Token } from './settings/tokens-file.js'
import { createMetrics, type Metrics } from './metrics.js'
import { connectNats, INBOX_PREFIX } from './nats.js'
import type { FastifyInstance } from 'fastify'
import { defined } from './domain/defined.js'

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

/** The process's soft limit of open files (Linux; Node raises it to the hard limit at start), or undefined when unknown or unlimited. */
function fileLimit (): number | undefined {
  try {
    const line = readText('/proc/self/limits').split('\n').find((l) => l.startsWith('Max open files'))
    const soft = line?.split(/\s{2,}/)[1]
    return soft === undefined || !/^\d+$/.test(soft) ? undefined : Number(soft)
  } catch {
    return undefined
  }
}

export interface ServiceOptions {
  config: Readonly<Config>
  log: PinoLogger
  version: string
  /** Timings for tests: how often views look for a missing bucket and check a live one (ms). */
  viewRetryMs?: number
  viewCheckMs?: number
  registryRetryMs?: number
  /** Timings for tests: an event stream's heartbeat, and how long its unsent bytes may wait for the reader (ms). */
  eventHeartbeatMs?: number
  eventStallMs?: number
}

async function listen (app: FastifyInstance, http: Config['http']): Promise<string> {
  try {
    return await app.listen({ host: http.host, port: http.port })
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    const why: Record<string, string> = {
      EADDRINUSE: 'the port is already taken; stop what listens there or choose another HTTP_PORT (0 picks a free one)',
      EACCES: 'this user may not listen there; choose an HTTP_PORT above 1023',
      EADDRNOTAVAIL: 'no interface of this machine has that address; choose another HTTP_HOST',
      ENOTFOUND: 'no interface of this machine has that name; choose another HTTP_HOST'
    }
    if (code === undefined || why[code] === undefined) throw err
    throw new StartError('HTTP_LISTEN_FAILED', `the gateway cannot listen on HTTP_HOST=${http.host} HTTP_PORT=${http.port}: ${why[code]}`, { cause: err })
  }
}

/** What the metrics read at scrape time: set once the start has opened them (a scrape comes through the gateway, which opens last). */
interface Scraped { views: Views, writer: RegistryWriter, provisioning: Provisioning, verb: () => VerbState }

/** The streams, waits and connections the gateway holds at most: HTTP_MAX_STREAMS and HTTP_MAX_WAITS, lowered when the open file limit cannot hold them. */
function holdBound (config: Readonly<Config>, log: PinoLogger): ReturnType<typeof connectionBound> {
  const bound = connectionBound(config.http.maxStreams, config.http.maxWaits, fileLimit())
  if (bound.lowered !== undefined) {
    log.warn({ fileLimit: bound.lowered.fileLimit, maxConnections: bound.maxConnections, maxStreams: bound.maxStreams, maxWaits: bound.maxWaits },
      'the open file limit (%d) cannot hold HTTP_MAX_STREAMS=%d and HTTP_MAX_WAITS=%d with room for other requests; holding %d streams and %d waits at most: raise the limit (ulimit -n) or lower them',
      bound.lowered.fileLimit, config.http.maxStreams, config.http.maxWaits, bound.maxStreams, bound.maxWaits)
  }
  return bound
}

/** The metrics, before the writer whose runs they count; their gauges read `scraped` once the start has set it. */
function openMetrics (config: Readonly<Config>, maxStreams: number, scraped: () => Scraped | undefined): Metrics {
  const views = (): Views => {
    const s = scraped()
    if (s === undefined) throw new Error('the metrics were read before the views opened')
    return s.views
  }
  return createMetrics(views, true, {
    ready: () => { const s = scraped(); return s !== undefined && readiness(s).ready },
    verbServing: () => scraped()?.verb() === 'serving',
    maxStreams,
    // Read from the views' per-node tallies at each scrape: one lookup a node.
    ...(config.metrics.nodeLastWrite ? { lastWrites: () => scraped()?.provisioning.overviews.lastWrites() ?? [] } : {}),
    totals: () => scraped()?.provisioning.overviews.totals()
  })
}

/** The registry writer, told when NATS goes and comes back; a run that fails is retried on its own schedule, or at once when NATS is back. */
function openWriter (nc: NatsConnection, config: Readonly<Config>, log: PinoLogger, metrics: Metrics, retryMs: number | undefined): RegistryWriter {
  const js = nc.jetstream()
  const writer = new RegistryWriter({
    // allow_direct: a bucket only bound (not created here) would otherwise read through the
    // stream's message API, a grant the service does not need.
    open: async () => await js.views.kv(BUCKETS.registry, { bindOnly: !config.registry.createBucket, allow_direct: true, replicas: config.registry.replicas, history: 1 }),
    compiled: compileRegistry(config.registry.domains),
    intervalMs: config.registry.intervalMs,
    ...defined({ retryMs }),
    log,
    onRun: (run) => metrics.registryRun(run)
  })
  followConnection(nc, (connected) => { writer.setConnected(connected) })
  return writer
}

interface Gateway { app: FastifyInstance, url: string, reload: () => void }

/** The gateway, listening at once (its /readyz says 503 until the verb is served); SIGHUP reads its tokens and certificate again. */
async function openGateway (options: ServiceOptions, parts: Scraped & { nc: NatsConnection, metrics: Metrics, bound: ReturnType<typeof connectionBound> }, opened: Array<() => Promise<void>>): Promise<Gateway> {
  const { config, log, version, eventHeartbeatMs, eventStallMs } = options
  const { nc, bound } = parts
  let tokens: readonly Token[] = config.http.tokens ?? []
  const tlsFiles = config.http.tls
  const app = await buildApp({
    provisioning: parts.provisioning,
    views: parts.views,
    writer: parts.writer,
    metrics: parts.metrics,
    log,
    corsOrigins: config.http.corsOrigins,
    version,
    maxAnswerBytes: () => nc.info?.max_payload ?? 1024 * 1024,
    verb: () => parts.verb(),
    maxWaits: bound.maxWaits,
    maxConnections: bound.maxConnections,
    events: {
      maxStreams: bound.maxStreams,
      ...defined({ heartbeatMs: eventHeartbeatMs, stallMs: eventStallMs })
    },
    ...defined({ tokens: config.http.tokensFile === undefined ? undefined : () => tokens, https: tlsFiles === undefined ? undefined : loadTls(tlsFiles, readText) })
  })
  opened.push(async () => await app.close())
  const url = await listen(app, config.http)
  const reload = (): void => {
    const tokensFile = config.http.tokensFile
    if (tokensFile !== undefined) {
      try {
        tokens = parseTokens(readText(tokensFile), tokensFile)
        log.info({ tokenNames: tokens.map((t) => t.name) }, 'HTTP_TOKENS_FILE read again')
        app.recheckHeld(tokens)
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
  }
  return { app, url, reload }
}

/**
 * Starts in an order that lets a rolling restart refuse nothing: the gateway listens at once (its
 * /readyz 503 until ready), but the verb joins its queue group, and answers discovery, only once
 * every view is settled, so that the group's requests go to instances that can answer them. Each
 * step pushes the release of what it opened; when a step fails, those are released in reverse
 * before the error goes on.
 */
export async function startService (options: ServiceOptions): Promise<Running> {
  const { config, log, version, viewRetryMs, viewCheckMs, registryRetryMs } = options
  const opened: Array<() => Promise<void>> = []
  try {
    const nc = await connectNats(config.nats, log)
    opened.push(async () => { if (!nc.isClosed()) await nc.close() })
    // Before the metrics: their streams' maximum is the bound in force, which the file limit may lower below HTTP_MAX_STREAMS.
    const bound = holdBound(config, log)
    const opening: { scraped?: Scraped } = {}
    const metrics = openMetrics(config, bound.maxStreams, () => opening.scraped)
    const writer = openWriter(nc, config, log, metrics, registryRetryMs)
    opened.push(async () => await writer.stop())
    // The first run creates the registry bucket, so its view starts after it, live rather than
    // absent; the other views start loading beside it.
    const firstRun = writer.run()
    const views = await createViews({ nc, log, inboxPrefix: INBOX_PREFIX, registryAfter: firstRun, ...defined({ retryMs: viewRetryMs, checkMs: viewCheckMs }) })
    opened.push(async () => await views.stop())
    let verb = (): VerbState => 'starting'
    const scraped: Scraped = { views, writer, provisioning: createProvisioning(views), verb: () => verb() }
    opening.scraped = scraped
    const { provisioning } = scraped
    const { app, url, reload } = await openGateway(options, { ...scraped, nc, metrics, bound }, opened)
    log.info({ url }, 'gateway listening; the verb is served once every view is read')
    // Awaited after the gateway listens: its /readyz says the instance is starting meanwhile
    // (the first run waits behind the views' load: ~0.8 s at 150k keys here).
    await firstRun
    await views.untilSettled()
    const bus = await startBus({ nc, provisioning, subject: config.subject, version, log, metrics })
    verb = () => bus.serving() ? 'serving' : 'down'
    // The pid is where `kill -HUP` goes (under `npm start` the process tree has several).
    log.info({ url, subject: config.subject, pid: process.pid }, 'mesh-provisioner serving')
    return {
      nc,
      views,
      provisioning,
      writer,
      bus,
      app,
      metrics,
      url,
      reload,
      async stop () {
        await writer.stop()
        await bus.stop()
        await app.close()
        await views.stop()
        if (!nc.isClosed()) await nc.drain()
      }
    }
  } catch (err) {
    await release(opened, log)
    throw err
  }
}

/** Releases what a failed start opened, latest first; a release that fails is logged, not thrown over the start's error. */
async function release (opened: Array<() => Promise<void>>, log: PinoLogger): Promise<void> {
  for (const close of opened.reverse()) {
    try {
      await close()
    } catch (err) {
      log.warn({ err }, 'releasing what the start opened failed')
    }
  }
}
