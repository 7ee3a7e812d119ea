// The run's temporary files in one folder of its own, removed at its end: the nats-servers' stores,
// the tokens files and certificates the suites write, Chromium's profile. Each is made under
// os.tmpdir(), which reads TMPDIR, and the workers and every process they start inherit it. In
// memory when /dev/shm is there: the suite starts ~130 JetStream servers, whose stores on disk
// cost it file-system work (docs/architecture.md "Tests"). A run's files no longer outlive it.

import { accessSync, constants } from 'node:fs'
import { chmod, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { PORT_CLAIMS, PORT_CLAIMS_DIR } from '../testkit/nats-server.js'
import { runFolder } from './run-folder.js'

const PREFIX = 'mesh-provisioner-suite-'
/** Set once for the run: each project runs its global setups, and they share the one folder. */
const MARK = 'MESH_PROVISIONER_SUITE_TMPDIR'

function inMemory (): string | undefined {
  try {
    accessSync('/dev/shm', constants.W_OK)
    return '/dev/shm'
  } catch {
    return undefined
  }
}

export default async function setup (): Promise<(() => Promise<void>) | undefined> {
  if (process.env[MARK] !== undefined) return undefined
  const dir = await runFolder(inMemory() ?? tmpdir(), PREFIX)
  // As /tmp is: the processes the suite starts as another user (test/container.test.ts) write
  // there too, and each folder made in it is its maker's alone.
  await chmod(dir, 0o1777)
  process.env[MARK] = dir
  // The loopback ports stay claimed machine-wide, beside other runs' and the bench's.
  process.env[PORT_CLAIMS] ??= PORT_CLAIMS_DIR
  process.env['TMPDIR'] = dir
  return async () => { await rm(dir, { recursive: true, force: true }) }
}
