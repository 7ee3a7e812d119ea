// Starts a real nats-server with JetStream for a test: a free loopback port, a temporary store, and
// stop, kill and restart on the same port and store (the way nats.js's own `nst` helpers do).

import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, connect as tcp } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect, type ConnectionOptions, type NatsConnection } from 'nats'

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
   * A client connection with every right (the test's own hand: seeding, deleting buckets).
   * Tests connect through this rather than with bare URLs, so that the server's accounts can change.
   */
  async connect (opts: Partial<ConnectionOptions> = {}): Promise<NatsConnection> {
    return await connect({ servers: this.url, ...opts })
  }

  /** The settings (SPEC §6) with which the service connects to this server. */
  serviceEnv (): Record<string, string> {
    return { NATS_URL: this.url }
  }

  get running (): boolean {
    return this.proc !== undefined
  }

  private async launch (): Promise<void> {
    const conf = join(this.dir, 'server.conf')
    await writeFile(conf, [
      `listen: "127.0.0.1:${this.port}"`,
      `jetstream { store_dir: ${JSON.stringify(join(this.dir, 'js'))} }`,
      this.opts.config ?? ''
    ].join('\n'))
    const proc = spawn(natsServerBin(), ['-c', conf, ...(this.opts.args ?? [])], { stdio: ['ignore', 'pipe', 'pipe'] })
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
