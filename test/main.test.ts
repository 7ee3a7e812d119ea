// The process as an operator runs it: a malformed setting stops the start with one line, and
// SIGTERM/SIGINT stop a serving process gracefully, exit 0, within a few seconds.

import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { beforeAll, expect, test } from 'vitest'
import type { NatsConnection } from 'nats'
import type { NatsServer } from '../testkit/nats-server.js'
import { suiteFixture } from './support/service.js'
import { askVerb } from './support/verb.js'

const fx = suiteFixture()
let server: NatsServer
let nc: NatsConnection
beforeAll(async () => {
  server = await fx.server()
  nc = await fx.admin(server)
})

function run (env: Record<string, string>): { proc: ChildProcess, out: () => string } {
  let out = ''
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { PATH: process.env['PATH'] ?? '', HTTP_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  proc.stdout?.on('data', (d: Buffer) => { out += d.toString() })
  proc.stderr?.on('data', (d: Buffer) => { out += d.toString() })
  return { proc, out: () => out }
}

test('a malformed setting stops the start with one line naming it, exit 2', async () => {
  const { proc, out } = run({ ...server.serviceEnv(), REGISTRY_INTERVAL: 'hourly' })
  const [code] = await once(proc, 'exit')
  expect(code).toBe(2)
  expect(out()).toBe('mesh-provisioner: REGISTRY_INTERVAL="hourly": it takes a duration of at least 1s, like 1h, 30m or 90s (a bare number is seconds)\n')
})

test.each(['SIGTERM', 'SIGINT'] as const)('%s stops it gracefully: exit 0 within a few seconds', async (signal) => {
  const { proc, out } = run({ ...server.serviceEnv(), LOG_LEVEL: 'info' })
  try {
    await expect.poll(out, { timeout: 15_000 }).toContain('mesh-provisioner serving')
    await expect.poll(async () => (await askVerb(nc, { what: 'registry', kind: 'secret' })).code, { timeout: 10_000 }).toBe(200)
    proc.kill(signal)
    // A stop that hangs never exits: the test's timeout is the bound, not a wall-clock figure.
    const [code] = await once(proc, 'exit')
    expect(code).toBe(0)
    expect(out()).toMatch(/"msg":"stopped"/)
  } finally {
    proc.kill('SIGKILL')
  }
})
