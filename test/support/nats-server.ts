// Starts a real nats-server with JetStream for a test: a free loopback port, a temporary store, the
// users and grants of deploy/accounts.conf (so the service runs under its least-privilege user),
// and stop, kill and restart on the same port and store (the way nats.js's own `nst` helpers do).

import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, connect as tcp } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { connect, type ConnectionOptions, type NatsConnection } from 'nats'

const DEPLOY_ACCOUNTS = fileURLToPath(new URL('../../deploy/accounts.conf', import.meta.url))

/** The shipped configuration's users, and the variables its passwords are read from. */
export const USERS = {
  admin: 'NATS_ADMIN_PASSWORD',
  'mesh-provisioner': 'MESH_PROVISIONER_PASSWORD',
  'node-ace': 'NODE_ACE_PASSWORD'
} as const
export type User = keyof typeof USERS

/** One password per user for the whole test process, so that the servers of a cluster agree; NATS parses a variable as a value, so each starts with a letter. */
const PASSWORDS = Object.fromEntries(Object.values(USERS).map((v) => [v, `pw${randomBytes(12).toString('hex')}`])) as Record<(typeof USERS)[User], string>

export function natsServerBin (): string {
  return process.env['NATS_SERVER_BIN'] ?? 'nats-server'
}

export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

async function reachable (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const s = tcp({ port, host: '127.0.0.1' }, () => { s.destroy(); resolve(true) })
    s.on('error', () => resolve(false))
  })
}

export interface NatsServerOptions {
  /** Extra configuration text (nats-server.conf syntax) appended after port, store and JetStream. */
  config?: string
  /** Reuse a port (a restarted server keeps its own). */
  port?: number
  /** Extra command line arguments. */
  args?: string[]
  /** Sign-in by this token instead of the shipped users (NATS allows no token beside users). */
  token?: string
}

export class NatsServer {
  private proc: ChildProcess | undefined
  private exited: Promise<void> | undefined
  log = ''

  private constructor (readonly port: number, readonly dir: string, private readonly opts: NatsServerOptions) {}

  static async start (opts: NatsServerOptions = {}): Promise<NatsServer> {
    const dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-nats-'))
    const server = new NatsServer(opts.port ?? await freePort(), dir, opts)
    await server.launch()
    return server
  }

  get url (): string {
    return `nats://127.0.0.1:${this.port}`
  }

  /**
   * A client connection with every right (the test's own hand: seeding, deleting buckets), signed
   * in as the shipped configuration's `admin` (or with the server's token).
   */
  async connect (opts: Partial<ConnectionOptions> = {}): Promise<NatsConnection> {
    if (this.opts.token !== undefined) return await connect({ servers: this.url, token: this.opts.token, ...opts })
    return await this.connectAs('admin', opts)
  }

  /** A client connection signed in as one of the shipped configuration's users. */
  async connectAs (user: User, opts: Partial<ConnectionOptions> = {}): Promise<NatsConnection> {
    return await connect({ servers: this.url, ...NatsServer.credentials(user), ...opts })
  }

  static credentials (user: User): { user: string, pass: string } {
    return { user, pass: PASSWORDS[USERS[user]] }
  }

  /** The settings (SPEC §6) with which the service connects to this server: its own least-privilege user. */
  serviceEnv (): Record<string, string> {
    if (this.opts.token !== undefined) return { NATS_URL: this.url, NATS_TOKEN: this.opts.token }
    const { user, pass } = NatsServer.credentials('mesh-provisioner')
    return { NATS_URL: this.url, NATS_USER: user, NATS_PASSWORD: pass }
  }

  get running (): boolean {
    return this.proc !== undefined
  }

  private async launch (): Promise<void> {
    const conf = join(this.dir, 'server.conf')
    // NATS includes only paths relative to the including file: the shipped accounts go beside it.
    await copyFile(DEPLOY_ACCOUNTS, join(this.dir, 'accounts.conf'))
    await writeFile(conf, [
      `listen: "127.0.0.1:${this.port}"`,
      `jetstream { store_dir: ${JSON.stringify(join(this.dir, 'js'))} }`,
      this.opts.token === undefined ? 'include "accounts.conf"' : `authorization { token: ${JSON.stringify(this.opts.token)} }`,
      this.opts.config ?? ''
    ].join('\n'))
    const proc = spawn(natsServerBin(), ['-c', conf, ...(this.opts.args ?? [])], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...PASSWORDS }
    })
    proc.stdout?.on('data', (d: Buffer) => { this.log += d.toString() })
    proc.stderr?.on('data', (d: Buffer) => { this.log += d.toString() })
    this.proc = proc
    this.exited = new Promise((resolve) => proc.once('exit', () => { this.proc = undefined; resolve() }))
    const spawned = new Promise<void>((resolve, reject) => {
      proc.once('spawn', resolve)
      proc.once('error', (err) => reject(new Error(`could not start ${natsServerBin()}: ${err.message}; install Debian's nats-server package or set NATS_SERVER_BIN`)))
    })
    await spawned
    const deadline = Date.now() + 10_000
    while (!/Server is ready/.test(this.log) || !await reachable(this.port)) {
      if (this.proc === undefined) throw new Error(`nats-server exited at start:\n${this.log}`)
      if (Date.now() > deadline) throw new Error(`nats-server did not become ready in 10 s:\n${this.log}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }

  /** Ends the server with a signal and waits until it has exited. */
  async stop (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (!this.proc) return
    this.proc.kill(signal)
    await this.exited
  }

  async kill (): Promise<void> {
    await this.stop('SIGKILL')
  }

  /** Starts the server again on the same port with the same store. */
  async restart (): Promise<void> {
    await this.stop()
    this.log = ''
    await this.launch()
  }

  async dispose (): Promise<void> {
    await this.stop()
    await rm(this.dir, { recursive: true, force: true })
  }
}
