// Starts the whole service in-process against a test's nats-server, with fast timings and no logs.

import { pino } from 'pino'
import { loadConfig, type Env } from '../../src/config.js'
import { startService, type Running } from '../../src/service.js'
import type { NatsConnection } from 'nats'
import { seedSampleMesh } from '../../scripts/sample-mesh.js'
import { NatsServer, type NatsServerOptions } from './nats-server.js'

/** Starts the service against `server` as the service's own NATS user; `env` overrides settings. */
export async function startTestService (server: NatsServer, env: Env = {}): Promise<Running> {
  const config = loadConfig({ ...server.serviceEnv(), HTTP_PORT: '0', LOG_LEVEL: process.env['TEST_LOG_LEVEL'] ?? 'silent', ...env })
  return await startService({
    config,
    log: pino({ level: config.logLevel }),
    version: '0.0.0-test',
    viewRetryMs: 100,
    viewCheckMs: 500,
    registryRetryMs: 200
  })
}

/** Waits until `fn` returns a truthy value (or throws after `ms`). */
export async function until<T> (fn: () => T | Promise<T>, ms = 5000, what = 'the condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms
  let last: unknown
  for (;;) {
    try {
      const v = await fn()
      if (v) return v as NonNullable<T>
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Waits until every view is live or known absent. */
export async function untilReady (running: Running, ms = 10_000): Promise<void> {
  await until(() => Object.values(running.views.status()).every((s) => s.state === 'live' || s.state === 'absent'), ms, 'every view live or absent')
}

export interface Seeded {
  server: NatsServer
  /** A full-rights client connection (the test's own hand). */
  nc: NatsConnection
  running: Running
  stop (): Promise<void>
}

/** A nats-server of the suite's own, seeded with the sample mesh, and the service ready against it. */
export async function startSeeded (opts: NatsServerOptions = {}): Promise<Seeded> {
  const server = await NatsServer.start(opts)
  const nc = await server.connect()
  await seedSampleMesh(nc)
  const running = await startTestService(server)
  await untilReady(running)
  return {
    server,
    nc,
    running,
    async stop () {
      await running.stop()
      await nc.close()
      await server.dispose()
    }
  }
}
