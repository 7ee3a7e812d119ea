// Starts a real nats-server with JetStream for the tests, the demo and the bench: a loopback port
// claimed below the kernel's ephemeral range, a temporary store, the users and grants of
// deploy/accounts.conf (so the service runs under its least-privilege user), and stop, kill and
// restart on the same ports and store (the way nats.js's own `nst` helpers do).

import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes, randomInt } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, unlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { connect, type ConnectionOptions, type NatsConnection } from 'nats'

const DEPLOY_ACCOUNTS = fileURLToPath(new URL('../deploy/accounts.conf', import.meta.url))

/** The shipped configuration's users, and the variables its passwords are read from. */
export const USERS = {
  admin: 'NATS_ADMIN_PASSWORD',
  'mesh-provisioner': 'MESH_PROVISIONER_PASSWORD',
  'node-ace': 'NODE_ACE_PASSWORD'
} as const
export type User = keyof typeof USERS

/** One password per user for the whole test process, so that the servers of a cluster agree; NATS parses a variable as a value, so each starts with a letter. */
const PASSWORDS = Object.fromEntries(Object.values(USERS).map((v) => [v, `pw${randomBytes(12).toString('hex')}`])) as Record<(typeof USERS)[User], string>

/** Where scripts/fetch-nats-server.sh unpacks Debian 13's nats-server 2.10. */
export const FETCHED_NATS_SERVER = fileURLToPath(new URL('../.cache/nats-server/2.10/usr/sbin/nats-server', import.meta.url))

/** `NATS_SERVER_BIN`, else the fetched 2.10 when it is there, else the `nats-server` on the PATH. */
export function natsServerBin (): string {
  return process.env['NATS_SERVER_BIN'] ?? (existsSync(FETCHED_NATS_SERVER) ? FETCHED_NATS_SERVER : 'nats-server')
}

export interface NatsServerOptions {
  /** Extra configuration text (nats-server.conf syntax) appended after port, store and JetStream. */
  config?: string
  /** Extra command line arguments. */
  args?: string[]
  /** Sign-in by this token instead of the shipped users (NATS allows no token beside users). */
  token?: string
  /** A JetStream store kept outside the server's temporary folder, which `dispose` leaves in place (the bench's large mesh, seeded once). */
  storeDir?: string
  /**
   * In a process group of its own, so that a Ctrl-C in a terminal reaches only the process that
   * started it, which stops it once what uses it has stopped (the demo).
   */
  detached?: boolean
}

/** The listening ports a server wrote to its ports file, by what listens. */
interface Ports { nats?: string[], cluster?: string[], monitoring?: string[] }

const portOf = (url: string | undefined): number | undefined => url === undefined ? undefined : Number(new URL(url).port)

/** The environment variable naming the folder of the port claims, when TMPDIR is not the machine's. */
export const PORT_CLAIMS = 'MESH_PROVISIONER_PORT_CLAIMS'

/**
 * A port is claimed by a file named for it, holding the claiming process's id, so that the test
 * processes of one machine never pick the same port (a claim whose process is gone is taken over).
 * The ports lie below the kernel's ephemeral range: a port the server picked itself (`-1`) lies in
 * it, and while a killed server is down, an outgoing connection of any process can take its port
 * and fail the restart with "address already in use" (seen in CI with a cluster's route port).
 * The claims are the machine's: a suite's run, which has a TMPDIR of its own (test/tmp-setup.ts),
 * names them in PORT_CLAIMS.
 */
export const PORT_CLAIMS_DIR = process.env[PORT_CLAIMS] ?? join(tmpdir(), 'mesh-provisioner-ports')
const FIRST_PORT = 10_000

function ephemeralLow (): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768
  } catch {
    return 32_768
  }
}

function alive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function claimPort (): Promise<number> {
  await mkdir(PORT_CLAIMS_DIR, { recursive: true })
  const end = Math.max(ephemeralLow(), FIRST_PORT + 1_000)
  for (;;) {
    const port = randomInt(FIRST_PORT, end)
    const file = join(PORT_CLAIMS_DIR, String(port))
    try {
      await writeFile(file, String(process.pid), { flag: 'wx' })
      return port
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      const owner = Number(await readFile(file, 'utf8').catch(() => ''))
      if (owner > 0 && !alive(owner)) await unlink(file).catch(() => {})
    }
  }
}

async function releasePort (port: number | undefined): Promise<void> {
  if (port !== undefined) await unlink(join(PORT_CLAIMS_DIR, String(port))).catch(() => {})
}

const inUse = (log: string): boolean => /address already in use/.test(log)

export class NatsServer {
  private proc: ChildProcess | undefined
  private exited: Promise<void> | undefined
  log = ''
  private ports: { client: number, cluster?: number, monitoring?: string } = { client: 0 }
  private cluster: { name: string, routes: number[] } | undefined

  private constructor (readonly dir: string, private readonly opts: NatsServerOptions) {}

  static async start (opts: NatsServerOptions = {}): Promise<NatsServer> {
    const dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-nats-'))
    const server = new NatsServer(dir, opts)
    // A port taken by some other program is given up for another claim, at the first start only.
    for (let tries = 1; ; tries++) {
      server.ports = { client: await claimPort() }
      try {
        await server.launch()
        return server
      } catch (err) {
        await releasePort(server.port)
        if (tries === 5 || !inUse(server.log)) throw err
        server.log = ''
      }
    }
  }

  /**
   * `count` servers in one JetStream cluster, named s1, s2, …. A JetStream cluster needs its routes
   * at start, and a route names a port: each server's ports are claimed first, then all start with
   * routes to each other.
   */
  static async cluster (count: number, opts: NatsServerOptions = {}): Promise<NatsServer[]> {
    const servers = await Promise.all(Array.from({ length: count }, async (_, i) => {
      const dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-nats-'))
      const server = new NatsServer(dir, { ...opts, config: `server_name: s${i + 1}\n${opts.config ?? ''}` })
      server.ports = { client: await claimPort(), cluster: await claimPort() }
      return server
    }))
    for (const s of servers) s.cluster = { name: 'mesh', routes: servers.filter((o) => o !== s).map((o) => o.clusterPort as number) }
    await Promise.all(servers.map(async (s) => await s.launch()))
    return servers
  }

  /** The client port claimed at the first start; a restart asks for it again. */
  get port (): number {
    return this.ports.client
  }

  /** The cluster (route) port, when the server is in a cluster; kept across restarts like `port`. */
  get clusterPort (): number | undefined {
    return this.ports.cluster
  }

  /** The monitoring endpoint's URL, when the configuration asks for one (`http: "127.0.0.1:-1"`). */
  get monitoringUrl (): string | undefined {
    return this.ports.monitoring
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

  /** The settings (docs/running.md) of a process that connects with every right: the shipped configuration's `admin`. */
  adminEnv (): Record<string, string> {
    return this.envAs('admin')
  }

  /** The settings (docs/running.md) with which the service connects to this server: its own least-privilege user. */
  serviceEnv (): Record<string, string> {
    return this.envAs('mesh-provisioner')
  }

  private envAs (user: User): Record<string, string> {
    if (this.opts.token !== undefined) return { NATS_URL: this.url, NATS_TOKEN: this.opts.token }
    const { pass } = NatsServer.credentials(user)
    return { NATS_URL: this.url, NATS_USER: user, NATS_PASSWORD: pass }
  }

  get running (): boolean {
    return this.proc !== undefined
  }

  private async launch (): Promise<void> {
    const conf = join(this.dir, 'server.conf')
    const cluster = this.cluster
    // NATS includes only paths relative to the including file: the shipped accounts go beside it.
    await copyFile(DEPLOY_ACCOUNTS, join(this.dir, 'accounts.conf'))
    // A restart asks for the ports it had, so that clients and routes find it again.
    await writeFile(conf, [
      `listen: "127.0.0.1:${this.port}"`,
      `ports_file_dir: ${JSON.stringify(this.dir)}`,
      `jetstream { store_dir: ${JSON.stringify(this.opts.storeDir ?? join(this.dir, 'js'))} }`,
      this.opts.token === undefined ? 'include "accounts.conf"' : `authorization { token: ${JSON.stringify(this.opts.token)} }`,
      cluster === undefined
        ? ''
        : `cluster { name: ${cluster.name}, listen: "127.0.0.1:${this.clusterPort as number}", routes: [${cluster.routes.map((port) => `"nats-route://127.0.0.1:${port}"`).join(', ')}] }`,
      this.opts.config ?? ''
    ].join('\n'))
    const proc = spawn(natsServerBin(), ['-c', conf, ...(this.opts.args ?? [])], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: this.opts.detached === true,
      env: { ...process.env, ...PASSWORDS }
    })
    proc.stdout?.on('data', (d: Buffer) => { this.log += d.toString() })
    proc.stderr?.on('data', (d: Buffer) => { this.log += d.toString() })
    this.proc = proc
    this.exited = new Promise((resolve) => proc.once('exit', () => { this.proc = undefined; resolve() }))
    await new Promise<void>((resolve, reject) => {
      proc.once('spawn', resolve)
      proc.once('error', (err) => reject(new Error(`could not start ${natsServerBin()}: ${err.message}; install Debian's nats-server package or set NATS_SERVER_BIN`)))
    })
    const ports = await this.portsFile(proc.pid as number)
    this.ports = { client: portOf(ports.nats?.[0]) ?? this.port, cluster: portOf(ports.cluster?.[0]), monitoring: ports.monitoring?.[0] }
  }

  /** Waits for the ports file the server writes once it listens (`<binary>_<pid>.ports`), and reads it. */
  private async portsFile (pid: number): Promise<Ports> {
    const deadline = Date.now() + 10_000
    for (;;) {
      if (this.proc === undefined) throw new Error(`nats-server exited at start:\n${this.log}`)
      const name = (await readdir(this.dir)).find((f) => f.endsWith(`_${pid}.ports`))
      // The file may be seen before its text is written: read it again until it parses.
      const ports = name === undefined ? undefined : await readFile(join(this.dir, name), 'utf8').then((t) => JSON.parse(t) as Ports).catch(() => undefined)
      if (ports?.nats !== undefined && /Server is ready/.test(this.log)) return ports
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

  /** Starts the server again on the same ports with the same store. */
  async restart (): Promise<void> {
    await this.stop()
    this.log = ''
    await this.launch()
  }

  async dispose (): Promise<void> {
    await this.stop()
    await Promise.all([releasePort(this.port), releasePort(this.clusterPort)])
    await rm(this.dir, { recursive: true, force: true })
  }
}
