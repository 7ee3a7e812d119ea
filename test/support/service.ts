// The suite's one fixture: what a test or a suite starts (nats-servers, connections, the service
// in-process with fast timings and no logs) is stopped when it ends, and the one NATS
// kill-and-restart scenario the fault suites share.

import { Writable } from 'node:stream'
import type { ConnectionOptions, NatsConnection } from 'nats'
import { pino } from 'pino'
import { afterAll, expect, onTestFinished, vi } from 'vitest'
import { loadConfig, type Env } from '../../src/config.js'
import { startService, type Running } from '../../src/service.js'
import { seedSampleMesh } from '../../testkit/sample-mesh.js'
import { NatsServer, type NatsServerOptions } from '../../testkit/nats-server.js'

export interface TestServiceOptions {
  /** Receives every log line (JSON) at `LOG_LEVEL` (default: `TEST_LOG_LEVEL` or silent). */
  onLog?: (line: string) => void
  /** An event stream's heartbeat and slow-reader bound (ms), shorter than the service's own for a test. */
  eventHeartbeatMs?: number
  eventStallMs?: number
  /** The registry writer's first retry after a failed run (ms; default 200). */
  registryRetryMs?: number
}

/** Starts the service against `server` as the service's own NATS user; `env` overrides settings. */
export async function startTestService (server: Pick<NatsServer, 'serviceEnv'>, env: Env = {}, opts: TestServiceOptions = {}): Promise<Running> {
  const config = loadConfig({ ...server.serviceEnv(), HTTP_PORT: '0', LOG_LEVEL: process.env['TEST_LOG_LEVEL'] ?? 'silent', ...env })
  const onLog = opts.onLog
  const log = onLog === undefined
    ? pino({ level: config.logLevel })
    : pino({ level: config.logLevel }, new Writable({ write (chunk: Buffer, _enc, done) { onLog(chunk.toString()); done() } }))
  return await startService({
    config,
    log,
    version: '0.0.0-test',
    viewRetryMs: 100,
    viewCheckMs: 500,
    registryRetryMs: opts.registryRetryMs ?? 200,
    ...(opts.eventHeartbeatMs === undefined ? {} : { eventHeartbeatMs: opts.eventHeartbeatMs }),
    ...(opts.eventStallMs === undefined ? {} : { eventStallMs: opts.eventStallMs })
  })
}

/** Waits until every view is live or known absent (vi.waitFor: unlike expect.poll, it also runs in beforeAll). */
export async function untilReady (running: Running, timeout = 10_000): Promise<void> {
  await vi.waitFor(() => {
    expect(Object.values(running.views.status()).filter((s) => s.state !== 'live' && s.state !== 'absent'), 'views not yet live or absent').toEqual([])
  }, { timeout, interval: 20 })
}

type Run = NonNullable<Running['writer']['last']>

/** Waits until the registry writer has run once, and gives that run, failed or not. */
export async function untilRan (running: Running, timeout = 10_000): Promise<Run> {
  return await vi.waitFor(() => {
    const last = running.writer.last
    expect(last, 'a registry run').toBeDefined()
    return last as Run
  }, { timeout, interval: 50 })
}

/** Waits until the registry writer's last run succeeded, and gives that run. */
export async function untilWritten (running: Running, timeout = 10_000): Promise<Run> {
  return await vi.waitFor(() => {
    const last = running.writer.last
    expect(last, 'a registry run that succeeds').toMatchObject({ ok: true })
    return last as Run
  }, { timeout, interval: 50 })
}

/**
 * What a test or a suite starts, stopped in reverse order when it ends: `fixture()` inside a test,
 * `suiteFixture()` at a file's top level for what its `beforeAll` starts.
 */
export class Fixture {
  private readonly undo: Array<() => Promise<unknown>> = []

  /** Runs `fn` when the fixture is disposed (the last deferred first). */
  defer (fn: () => Promise<unknown>): void {
    this.undo.push(fn)
  }

  /**
   * Undoes in turn; a step still running after 5 s says on stderr which one (its source), so that
   * a hook that times out names what hung (an HTTP/2 browser file's teardown did once, 2026-12-03).
   */
  async dispose (): Promise<void> {
    for (const fn of this.undo.splice(0).reverse()) {
      const slow = setTimeout(() => { process.stderr.write(`fixture teardown still running after 5 s: ${fn.toString()}\n`) }, 5000)
      try {
        await fn()
      } finally {
        clearTimeout(slow)
      }
    }
  }

  async server (opts: NatsServerOptions = {}): Promise<NatsServer> {
    const server = await NatsServer.start(opts)
    this.defer(async () => await server.dispose())
    return server
  }

  /**
   * A full-rights client connection (the test's own hand) that reconnects fast and for ever, so
   * that its writes after a restart do not wait on it.
   */
  async admin (server: NatsServer, opts: Partial<ConnectionOptions> = {}): Promise<NatsConnection> {
    const nc = await server.connect({ maxReconnectAttempts: -1, reconnectTimeWait: 50, ...opts })
    this.defer(async () => await nc.close())
    return nc
  }

  async service (server: Pick<NatsServer, 'serviceEnv'>, env: Env = {}, opts: TestServiceOptions = {}): Promise<Running> {
    const running = await startTestService(server, env, opts)
    this.defer(async () => await running.stop())
    return running
  }
}

/** A fixture for the running test, disposed when the test finishes (passed or failed). */
export function fixture (): Fixture {
  const fx = new Fixture()
  onTestFinished(async () => await fx.dispose())
  return fx
}

/** A fixture for the whole file (call it at the top level), disposed after its last test. */
export function suiteFixture (): Fixture {
  const fx = new Fixture()
  afterAll(async () => await fx.dispose())
  return fx
}

export interface Seeded {
  server: NatsServer
  /** A full-rights client connection (the test's own hand). */
  nc: NatsConnection
  running: Running
}

/** A nats-server of the suite's own, seeded with the sample mesh, and the service ready against it. */
export async function startSeeded (fx: Fixture, opts: NatsServerOptions = {}): Promise<Seeded> {
  const server = await fx.server(opts)
  const nc = await fx.admin(server)
  await seedSampleMesh(nc)
  const running = await fx.service(server)
  await untilReady(running)
  return { server, nc, running }
}

/**
 * How long after a restart an update may take to show in a view. The service resumes its watches
 * at the reconnect (well under a second); without that, nats.js's own heartbeat check recreates a
 * watch only after ~12 s (docs/architecture.md#what-nats-does-here). 5 s tells the two apart (the kill came seconds before the reconnect) with room for a busy machine.
 */
export const UPDATE_AFTER_RECONNECT_MS = 5000

/** Resolves at the next reconnect of `nc`. */
export async function reconnected (nc: NatsConnection): Promise<void> {
  for await (const s of nc.status()) if (s.type === 'reconnect') return
}

export interface KillAndRestart {
  /** Runs while the server is down, before the restart. */
  whileDown?: () => Promise<void>
  /** Connections to wait for: the restart resolves once each has reconnected. */
  reconnecting?: NatsConnection[]
}

/**
 * Kills `server` with SIGKILL, runs `whileDown`, restarts it on the same port and store, and waits
 * until the given connections have reconnected to it.
 */
export async function killAndRestart (server: NatsServer, { whileDown, reconnecting = [] }: KillAndRestart = {}): Promise<void> {
  await server.kill()
  await whileDown?.()
  // Listened for before the restart, so that no reconnect is missed.
  const back = Promise.all(reconnecting.map(reconnected))
  await server.restart()
  await back
}
