// The mesh at ten times today's (issue 21): 3M needs keys on 3000 nodes take minutes to write, so
// the mesh is seeded once into a JetStream store the bench keeps in .bench-tmp, one per nats-server
// version and size, and every later run starts a server on it.

import { execFile } from 'node:child_process'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import { NatsServer, natsServerBin } from '../testkit/nats-server.js'
import { nodesFor, seedMesh } from './mesh.js'
import { log } from './measure.js'

const root = fileURLToPath(new URL('..', import.meta.url))
/** Bumped when the mesh's writes change, so that a store of an older mesh is seeded again. */
const MESH_VERSION = 2

/** The version the binary the bench runs prints (`nats-server: v2.10.27` → `2.10.27`). */
export async function natsServerVersion (): Promise<string> {
  const { stdout } = await promisify(execFile)(natsServerBin(), ['--version'])
  return /v?(\d+\.\d+\.\d+)/.exec(stdout)?.[1] ?? stdout.trim()
}

interface Seeded { mesh: number, needs: number, writes: number, messages: number }

/** A server on the kept store of a mesh of about `keys` needs keys, seeding it first when there is none. */
export async function keptMesh (keys: number): Promise<{ server: NatsServer, needs: number }> {
  const dir = join(root, '.bench-tmp', `mesh-${keys}-nats-${await natsServerVersion()}`)
  const marker = join(dir, 'seeded.json')
  const seeded = await readFile(marker, 'utf8').then((t) => JSON.parse(t) as Seeded, () => undefined)
  if (seeded?.mesh === MESH_VERSION) {
    const server = await NatsServer.start({ storeDir: join(dir, 'js') })
    const nc = await server.connect()
    try {
      // A store the server could not read whole is seeded again rather than measured.
      const messages = (await (await nc.jetstreamManager({ timeout: 120_000 })).streams.info(`KV_${BUCKETS.needs}`)).state.messages
      if (messages === seeded.messages) {
        log(`the kept mesh of ${seeded.needs} needs keys (${dir})`)
        return { server, needs: seeded.needs }
      }
      log(`the kept mesh in ${dir} holds ${messages} needs messages, not ${seeded.messages}: seeding it again`)
    } finally {
      await nc.close()
    }
    await server.dispose()
  }
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { recursive: true })
  const server = await NatsServer.start({ storeDir: join(dir, 'js') })
  const nc = await server.connect({ timeout: 120_000 })
  try {
    log(`seeding ${keys} needs keys once into ${dir} (minutes at 3M; later runs reuse it)`)
    const result = await seedMesh(nc, nodesFor(keys))
    const messages = (await (await nc.jetstreamManager()).streams.info(`KV_${BUCKETS.needs}`)).state.messages
    log(`seeded ${result.needs} needs keys (${result.writes} writes) in ${result.seconds.toFixed(1)} s`)
    await writeFile(marker, JSON.stringify({ mesh: MESH_VERSION, needs: result.needs, writes: result.writes, messages } satisfies Seeded))
    return { server, needs: result.needs }
  } finally {
    await nc.close()
  }
}
