// A Go module's view of the verb: test/go/client (built offline in GOPATH mode from Debian's
// golang-go and golang-github-nats-io-go-nats-dev) asks with a struct marshalled without omitempty,
// decodes every answer strictly into typed structs and runs micro discovery; it fails on any
// refusal, type mismatch or unknown field.

import { execFile, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { NatsServer } from '../testkit/nats-server.js'
import { startSeeded, suiteFixture, type Seeded } from './support/service.js'

const GOPATH = '/usr/share/gocode'
const present = spawnSync('go', ['version']).status === 0 && existsSync(join(GOPATH, 'src/github.com/nats-io/nats.go/micro'))
if (!present && process.env['CI'] !== undefined) throw new Error('go or the nats.go sources are missing; CI installs Debian\'s golang-go and golang-github-nats-io-go-nats-dev (.ci/run)')

const run = promisify(execFile)
const root = fileURLToPath(new URL('..', import.meta.url))

describe.skipIf(!present)('a Go module asking the verb', () => {
  const fx = suiteFixture()
  let seeded: Seeded
  let dir: string
  let binary: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-go-'))
    binary = join(dir, 'client')
    const env = { PATH: process.env['PATH'] ?? '', HOME: dir, GO111MODULE: 'off', GOPATH, GOCACHE: join(dir, 'cache'), GOFLAGS: '' }
    await run('go', ['build', '-o', binary, './test/go/client'], { cwd: root, env, timeout: 110_000 })
    seeded = await startSeeded(fx)
  }, 120_000)
  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  test('gets its answers into typed structs, and discovers the service', async () => {
    const node = NatsServer.credentials('node-ace')
    const admin = NatsServer.credentials('admin')
    const { stdout } = await run(binary, [], {
      env: {
        NATS_URL: seeded.server.url,
        NATS_USER: node.user,
        NATS_PASSWORD: node.pass,
        NATS_INBOX_PREFIX: '_INBOX_ace',
        NATS_ADMIN_USER: admin.user,
        NATS_ADMIN_PASSWORD: admin.pass
      },
      timeout: 30_000
    }).catch((err: { stderr?: string, message: string }) => { throw new Error(err.stderr?.trim() || err.message) })
    expect(stdout).toMatch(/^go client: 13 registry kinds, 4 needs of ace\/gitea, \d+ needing forge-account; STATS \d+ requests, 1 errors\n$/)
  })
})
