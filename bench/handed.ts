// The nats-server the bench is handed by NATS_URL instead of starting one, so that the rows can be
// read on an operator's own server and configuration. It holds the large mesh, whose rows measure
// against NATS' own pace (the load, the streams, the sweep). The other meshes stay on servers the
// bench starts: each runs beside the large one, a server holds one mesh (the buckets' names and the
// verb's subject are fixed), and the 3M mesh's store is kept between runs.

import { connect, type ConnectionOptions, type NatsConnection, type NatsError } from 'nats'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import type { NatsServer } from '../testkit/nats-server.js'

/** What the bench asks of a server it puts a mesh on: one it started, or the one it is handed. */
export type MeshServer = Pick<NatsServer, 'url' | 'connect' | 'adminEnv' | 'serviceEnv' | 'dispose'>

/** A handed server the bench cannot use, with what would work: printed in one line, exit status 2. */
export class HandedRefused extends Error {}

/** The handed server's users are deploy/accounts.conf's, their passwords in the variables it reads them from. */
const PASSWORDS = { admin: 'NATS_ADMIN_PASSWORD', 'mesh-provisioner': 'MESH_PROVISIONER_PASSWORD' } as const
type User = keyof typeof PASSWORDS

const STREAMS = Object.values(BUCKETS).map((bucket) => `KV_${bucket}`)
const bucketOf = (stream: string): string => stream.slice('KV_'.length)
/** JetStream's error code for a stream that does not exist (its API's 404 has other causes too). */
const STREAM_NOT_FOUND = 10059

export class HandedServer implements MeshServer {
  private constructor (readonly url: string, readonly version: string, private readonly passwords: Record<User, string>) {}

  /**
   * The server NATS_URL names, checked before the bench starts anything: reachable as `admin`
   * (and as the service's user when the service signs in as it), with JetStream, and holding none
   * of the service's buckets, since the bench creates, fills and at its end deletes them.
   */
  static async open (env: NodeJS.ProcessEnv, serviceUser: User): Promise<HandedServer | undefined> {
    const url = env['NATS_URL']
    if (url === undefined || url === '') return undefined
    const users: User[] = serviceUser === 'admin' ? ['admin'] : ['admin', serviceUser]
    const missing = users.map((u) => PASSWORDS[u]).filter((name) => (env[name] ?? '') === '')
    if (missing.length > 0) {
      throw new HandedRefused(`NATS_URL=${url} hands the bench a server, and ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set: run that server with deploy/accounts.conf (deploy/nats-server.conf includes it) and give the bench the passwords it reads, or unset NATS_URL to let the bench start its own`)
    }
    const passwords = { admin: env[PASSWORDS.admin] as string, 'mesh-provisioner': env[PASSWORDS['mesh-provisioner']] ?? '' }
    const nc = await connectOrRefuse(url, 'admin', passwords.admin)
    try {
      const jsm = await nc.jetstreamManager().catch((err: Error) => { throw new HandedRefused(`NATS_URL=${url}: the server answers without JetStream (${err.message}); enable it for the account of deploy/accounts.conf`) })
      // Only "not found" says a bucket is absent: a bucket the bench could not look at might be one it would delete.
      const held = (await Promise.all(STREAMS.map(async (s) => await jsm.streams.info(s).then(() => s, (err: NatsError) => {
        if (err.api_error?.err_code === STREAM_NOT_FOUND) return undefined
        throw new HandedRefused(`NATS_URL=${url}: could not tell whether the server holds ${s} (${err.message}); the bench takes only a server it can see holds none of the service's buckets`)
      })))).filter((s) => s !== undefined)
      if (held.length > 0) {
        throw new HandedRefused(`NATS_URL=${url}: the server holds the bucket${held.length > 1 ? 's' : ''} ${held.map(bucketOf).join(', ')} already; the bench creates, fills and deletes the service's buckets, so it takes a server without them: hand it another server, or delete ${held.length > 1 ? 'them' : 'it'} (nats kv del ${bucketOf(held[0] as string)})`)
      }
      if (users.includes('mesh-provisioner')) await (await connectOrRefuse(url, 'mesh-provisioner', passwords['mesh-provisioner'])).close()
      return new HandedServer(url, nc.info?.version ?? 'unknown', passwords)
    } finally {
      await nc.close()
    }
  }

  async connect (opts: Partial<ConnectionOptions> = {}): Promise<NatsConnection> {
    return await connect({ servers: this.url, user: 'admin', pass: this.passwords.admin, ...opts })
  }

  adminEnv (): Record<string, string> {
    return { NATS_URL: this.url, NATS_USER: 'admin', NATS_PASSWORD: this.passwords.admin }
  }

  serviceEnv (): Record<string, string> {
    return { NATS_URL: this.url, NATS_USER: 'mesh-provisioner', NATS_PASSWORD: this.passwords['mesh-provisioner'] }
  }

  /** Deletes the service's buckets, which the bench made here (it takes no server that held one). */
  async dispose (): Promise<void> {
    const nc = await this.connect()
    try {
      const jsm = await nc.jetstreamManager()
      await Promise.all(STREAMS.map(async (s) => await jsm.streams.delete(s).catch(() => false)))
    } finally {
      await nc.close()
    }
  }
}

async function connectOrRefuse (url: string, user: User, pass: string): Promise<NatsConnection> {
  try {
    return await connect({ servers: url, user, pass, timeout: 5000 })
  } catch (err) {
    throw new HandedRefused(`NATS_URL=${url}: could not connect as ${user} (${(err as Error).message}); check the URL, and that ${PASSWORDS[user]} holds the password the server reads for ${user}`)
  }
}
