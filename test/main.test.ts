// The process as an operator runs it: a malformed setting stops the start with one line, and
// SIGTERM/SIGINT stop a serving process gracefully, exit 0, within a few seconds.

import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type Server } from 'node:net'
import { beforeAll, expect, test } from 'vitest'
import type { NatsConnection } from 'nats'
import type { NatsServer } from '../testkit/nats-server.js'
import { fixture, suiteFixture } from './support/service.js'
import { REPEAT_MS } from '../src/stop-signal.js'
import { commandOf, descendants, runMain } from './support/process.js'
import { isSynced, openStream, untilEvent } from './support/sse.js'
import { askVerb } from './support/verb.js'

const fx = suiteFixture()
let server: NatsServer
let nc: NatsConnection
beforeAll(async () => {
  server = await fx.server()
  nc = await fx.admin(server)
})

test('a malformed setting stops the start with one line naming it, exit 2', async () => {
  const { proc, out } = runMain({ ...server.serviceEnv(), REGISTRY_INTERVAL: 'hourly' })
  const [code] = await once(proc, 'close')
  expect(code).toBe(2)
  expect(out()).toBe('mesh-provisioner: REGISTRY_INTERVAL="hourly": it takes a duration of at least 1s, like 1h, 30m or 90s (a bare number is seconds)\n')
})

test.each(['SIGTERM', 'SIGINT'] as const)('%s stops it gracefully with an event stream open: exit 0 within a few seconds', async (signal) => {
  const { proc, out } = runMain({ ...server.serviceEnv(), LOG_LEVEL: 'info' })
  try {
    await expect.poll(out, { timeout: 15_000 }).toContain('mesh-provisioner serving')
    // The pid to send SIGHUP to is in the log (under npm start, several processes would be candidates).
    expect(out()).toMatch(new RegExp(`"pid":${proc.pid as number}[,}].*"msg":"mesh-provisioner serving"`))
    await expect.poll(async () => (await askVerb(nc, { what: 'registry', kind: 'secret' })).code, { timeout: 10_000 }).toBe(200)
    // An open stream must not hold the stop past close-with-grace's deadline (which exits 1).
    const url = /"url":"(http:[^"]+)"/.exec(out())?.[1] as string
    const stream = await openStream(`${url}/v1/registry/events`)
    await untilEvent(stream, isSynced)
    proc.kill(signal)
    // A stop that hangs never exits: the test's timeout is the bound, not a wall-clock figure.
    const [code] = await once(proc, 'close')
    expect(code).toBe(0)
    expect(out()).toMatch(/"msg":"stopped"/)
    await stream.ended
  } finally {
    proc.kill('SIGKILL')
  }
})

test('a second signal a second or more after the first stops it at once, exit 1, where the stop would take longer', async () => {
  // NATS gone, the stop waits seconds on the connection: long enough to be signalled again.
  const server = await fixture().server()
  const { proc, out } = runMain({ ...server.serviceEnv(), LOG_LEVEL: 'info' })
  try {
    await expect.poll(out, { timeout: 15_000 }).toContain('mesh-provisioner serving')
    await server.stop()
    proc.kill('SIGTERM')
    await expect.poll(out, { timeout: 5_000 }).toMatch(/"msg":"stopping"/)
    await new Promise((resolve) => setTimeout(resolve, REPEAT_MS + 200))
    expect(out()).not.toMatch(/"msg":"stopped"/)
    proc.kill('SIGTERM')
    const [code] = await once(proc, 'close')
    expect(code).toBe(1)
    expect(out()).toMatch(/"signal":"SIGTERM","msg":"second SIGTERM, exiting"/)
    expect(out()).not.toMatch(/"msg":"stopped"/)
  } finally {
    proc.kill('SIGKILL')
  }
})

/** `npm start` as a person runs it, once it serves; its processes are killed when `use` ends, whatever happened. */
async function npmStart (detached: boolean, use: (proc: ChildProcess, out: () => string, tree: number[]) => Promise<void>): Promise<void> {
  let out = ''
  const proc = spawn('npm', ['start'], { cwd: new URL('..', import.meta.url), env: { ...process.env, ...server.serviceEnv(), HTTP_PORT: '0', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'], detached })
  proc.stdout.on('data', (d: Buffer) => { out += d.toString() })
  proc.stderr.on('data', (d: Buffer) => { out += d.toString() })
  let tree: number[] = []
  try {
    await expect.poll(() => out, { timeout: 20_000 }).toContain('mesh-provisioner serving')
    tree = descendants(proc.pid as number)
    await use(proc, () => out, tree)
  } finally {
    for (const pid of [proc.pid as number, ...tree]) try { process.kill(pid, 'SIGKILL') } catch {}
  }
}

test('SIGTERM to `npm start` reaches the service, which stops gracefully and leaves no process behind', async () => {
  await npmStart(false, async (proc, out, tree) => {
    // npm's one child is the service itself (`exec node` in the script), not a shell holding it.
    expect(tree.map((pid) => commandOf(pid) ?? '')).toEqual([expect.stringMatching(/^\S*node .*dist\/main\.js$/)])
    proc.kill('SIGTERM')
    const [code] = await once(proc, 'exit')
    expect(out()).toMatch(/"msg":"stopped"/)
    expect(code).toBe(0)
    await expect.poll(() => tree.filter((pid) => commandOf(pid) !== undefined), { timeout: 10_000 }).toEqual([])
  })
})

test('Ctrl-C in a terminal under `npm start` stops it gracefully, though the service gets the SIGINT twice', async () => {
  // A process group of its own, as a terminal's foreground job is: Ctrl-C signals every process in
  // it, and npm passes its own SIGINT on to the service as well.
  await npmStart(true, async (proc, out) => {
    process.kill(-(proc.pid as number), 'SIGINT')
    const [code] = await once(proc, 'exit')
    // It did get the signal twice, and took the second for the first.
    expect(out()).toMatch(/"signal":"SIGINT","msg":"the same stop signal again/)
    expect(out()).not.toMatch(/exiting/)
    expect(out()).toMatch(/"msg":"stopped"/)
    expect(code).toBe(0)
  })
})

async function taken (): Promise<{ port: number, holder: Server }> {
  const holder = createServer()
  holder.listen(0, '127.0.0.1')
  await once(holder, 'listening')
  return { port: (holder.address() as { port: number }).port, holder }
}

test('an HTTP port already taken is one line naming HTTP_HOST and HTTP_PORT, exit 1', async () => {
  const { port, holder } = await taken()
  try {
    const { proc, out } = runMain({ ...server.serviceEnv(), HTTP_PORT: String(port), LOG_LEVEL: 'info' })
    const [code] = await once(proc, 'close')
    expect(code).toBe(1)
    const lines = out().trim().split('\n').filter((l) => !l.startsWith('{'))
    expect(lines).toEqual([`mesh-provisioner: the gateway cannot listen on HTTP_HOST=127.0.0.1 HTTP_PORT=${port}: the port is already taken; stop what listens there or choose another HTTP_PORT (0 picks a free one)`])
    // No stack trace: the service runs compiled (test/support/process.ts), as it does from dist/.
    expect(out()).not.toMatch(/"level":60|\bat .*\.js:\d+/)
  } finally {
    holder.close()
  }
})

test('a start that fails at a later step releases what the earlier ones opened: the NATS connection first of all', async () => {
  const fx = fixture()
  const watched = await fx.server({ config: 'http: "127.0.0.1:-1"' })
  const { port, holder } = await taken()
  const serviceConnections = async (): Promise<number> => {
    const connz = await (await fetch(`${watched.monitoringUrl as string}/connz`)).json() as { connections: Array<{ name?: string }> }
    return connz.connections.filter((c) => c.name === 'mesh-provisioner').length
  }
  try {
    await expect(fx.service(watched, { HTTP_PORT: String(port) })).rejects.toThrow(expect.objectContaining({ name: 'StartError', code: 'HTTP_LISTEN_FAILED' }))
    await expect.poll(serviceConnections, { timeout: 5000 }).toBe(0)
    // The connection was there to release: a start that succeeds holds one.
    await fx.service(watched)
    expect(await serviceConnections()).toBe(1)
  } finally {
    holder.close()
  }
})
