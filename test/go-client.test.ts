// A Go module's view of the verb: test/go/client (built offline in GOPATH mode from Debian's
// golang-go and golang-github-nats-io-go-nats-dev) asks with a struct marshalled without omitempty,
// decodes every answer strictly into typed structs and runs micro discovery; it fails on any
// refusal, type mismatch or unknown field. Its structs match the AsyncAPI document's schemas.

import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { NatsServer } from '../testkit/nats-server.js'
import { startSeeded, suiteFixture, type Seeded } from './support/service.js'
import { GOPATH, has } from './support/tools.js'

const present = has('go')
if (!present && process.env['CI'] !== undefined) throw new Error('go or the nats.go sources are missing; CI installs Debian\'s golang-go and golang-github-nats-io-go-nats-dev (.ci/run)')

const run = promisify(execFile)
const root = fileURLToPath(new URL('..', import.meta.url))

const fx = suiteFixture()
let dir: string | undefined
/** test/go/client, built once for both suites (offline, from Debian's sources, with an empty cache of its own). */
let binary: string
let seeded: Seeded

// The build (each suite built it with an empty cache before: ~4 s of CPU and as much of the wall)
// and the seeded service start side by side: neither needs the other.
beforeAll(async () => {
  if (!present) return
  dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-go-'))
  const env = { PATH: process.env['PATH'] ?? '', HOME: dir, GO111MODULE: 'off', GOPATH, GOCACHE: join(dir, 'cache'), GOFLAGS: '' }
  binary = join(dir, 'client')
  ;[, seeded] = await Promise.all([run('go', ['build', '-o', binary, './test/go/client'], { cwd: root, env, timeout: 110_000 }), startSeeded(fx)])
}, 120_000)
afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

interface GoField { kind: string, elem?: string, optional: boolean }
type GoTypes = Record<string, Record<string, GoField>>
interface Schema { type?: string, format?: string, $ref?: string, anyOf?: Schema[], items?: Schema, properties?: Record<string, Schema>, required?: string[] }

const asyncApi = JSON.parse(await readFile(new URL('../asyncapi/asyncapi.json', import.meta.url), 'utf8')) as { components: { schemas: Record<string, Schema> } }
const schemas = asyncApi.components.schemas
const resolve = (s: Schema): Schema => s.$ref === undefined ? s : resolve(schemas[s.$ref.replace('#/components/schemas/', '')] as Schema)
const named = (name: string): Schema => resolve({ $ref: `#/components/schemas/${name}` })
const property = (s: Schema, name: string): Schema => resolve(s.properties?.[name] as Schema)
const itemsOf = (s: Schema): Schema => resolve(s.items as Schema)

/** A schema's kind as the Go check names it: a union by its members' type, a date-time, an open schema any JSON. */
function kindOf (s: Schema): string {
  const r = resolve(s)
  if (r.anyOf !== undefined) return kindOf(r.anyOf[0] as Schema)
  if (r.format === 'date-time') return 'date-time'
  return r.type ?? 'json'
}

/**
 * What does not match between a Go struct and the schemas it stands for: a field no schema has, a
 * kind that differs, and (where it decodes strictly) a property the struct lacks.
 */
function mismatches (go: Record<string, GoField>, stands: Schema[], strict: boolean, at: string): string[] {
  const found: string[] = []
  const properties = new Map<string, Schema>()
  for (const s of stands) for (const [name, p] of Object.entries(s.properties ?? {})) properties.set(name, p)
  for (const [name, field] of Object.entries(go)) {
    const p = properties.get(name)
    if (p === undefined) { found.push(`${at}.${name}: no schema has it`); continue }
    const kind = kindOf(p)
    // json.RawMessage takes any JSON; a Go integer or string field takes its schema's kind.
    if (field.kind !== 'json' && field.kind !== kind) found.push(`${at}.${name}: Go ${field.kind}, schema ${kind}`)
    if (field.elem !== undefined && kind === 'array' && field.elem !== kindOf(itemsOf(p))) found.push(`${at}.${name}[]: Go ${field.elem}, schema ${kindOf(itemsOf(p))}`)
  }
  if (strict) for (const name of properties.keys()) if (go[name] === undefined) found.push(`${at}.${name}: the struct lacks it (a strict decode would refuse the answer)`)
  return found
}

describe('the Go module\'s structs', () => {
  test.skipIf(!present)('match the AsyncAPI document\'s schemas of what they send and decode', async () => {
    const go = JSON.parse((await run(binary, ['-describe'])).stdout) as GoTypes
    const whats = ['Registry', 'Needs', 'Applied', 'Collect']
    const answers = whats.map((w) => named(`${w}Answer`))
    const entries = answers.map((a) => itemsOf(property(a, 'entries')))
    const deleted = answers.map((a) => itemsOf(property(a, 'deleted')))
    const info = named('InfoAnswer')
    const stats = named('StatsAnswer')
    const t = (name: string): Record<string, GoField> => go[name] ?? {}
    expect([
      ...mismatches(t('Request'), whats.map((w) => named(`${w}Request`)), false, 'Request'),
      ...mismatches(t('Answer'), answers, true, 'Answer'),
      ...mismatches(t('Entry'), [...entries, ...deleted], true, 'Entry'),
      ...mismatches(t('OutOfShape'), [named('OutOfShape')], true, 'OutOfShape'),
      ...mismatches(t('Cut'), [property(answers[0] as Schema, 'cut')], true, 'Cut'),
      ...mismatches(t('ErrorBody'), [named('ErrorBody')], true, 'ErrorBody'),
      ...mismatches(t('Error'), [property(named('ErrorBody'), 'error')], true, 'ErrorBody.error'),
      ...mismatches(t('Ping'), [named('PingAnswer')], true, 'Ping'),
      ...mismatches(t('Info'), [info], true, 'Info'),
      ...mismatches(t('EndpointInfo'), [itemsOf(property(info, 'endpoints'))], true, 'EndpointInfo'),
      ...mismatches(t('Stats'), [stats], true, 'Stats'),
      ...mismatches(t('EndpointStats'), [itemsOf(property(stats, 'endpoints'))], false, 'EndpointStats')
    ]).toEqual([])
  }, 120_000)
})

describe.skipIf(!present)('a Go module asking the verb', () => {
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
