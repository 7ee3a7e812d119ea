// The verb against a real nats-server and a seeded mesh: every request and filter, keys out of
// shape, values that are not JSON, every kind of bad request, and discovery.

import { beforeAll, describe, expect, test, vi } from 'vitest'
import type { NatsConnection } from 'nats'
import { fixture, startSeeded, suiteFixture, untilReady, type Seeded } from './support/service.js'
import { askVerb } from './support/verb.js'
import { NODES, MODULES } from '../testkit/sample-mesh.js'
import { compileRegistry } from '../src/domain/registry/registry.js'
import { DEFAULT_DOMAINS } from '../src/domain/registry/registry-table.js'
import type { Running } from '../src/service.js'

const fx = suiteFixture()
let seeded: Seeded
let nc: NatsConnection
let svc: Running

beforeAll(async () => {
  seeded = await startSeeded(fx)
  nc = seeded.nc
  svc = seeded.running
  await vi.waitFor(() => expect(svc.views.status().registry.keys).toBe(13), { timeout: 10_000, interval: 50 })
})

const keys = (body: { entries: Array<{ key: string }> }) => body.entries.map((e) => e.key)

describe('registry', () => {
  test('an empty payload asks for the registry: every kind of docs/registry.md, sorted, as compiled', async () => {
    const reply = await askVerb(nc, '')
    expect(reply.code).toBe(200)
    const compiled = compileRegistry(DEFAULT_DOMAINS)
    expect(keys(reply.body)).toEqual([...compiled.keys()].sort())
    for (const e of reply.body.entries) {
      expect(e).toEqual({ key: e.kind, kind: e.kind, value: compiled.get(e.kind)?.value, revision: expect.any(Number), updated: expect.any(String) })
    }
    expect(reply.body).toMatchObject({ what: 'registry', bucket: 'mesh-provisioner_registry', total: 13, stale: false, outOfShape: [] })
  })

  test('narrowed by kind', async () => {
    const reply = await askVerb(nc, { what: 'registry', kind: 'secret' })
    expect(reply.body.entries).toEqual([expect.objectContaining({ kind: 'secret', value: { kind: 'secret', module: 'mesh-vault', verb: 'mesh-vault.secret' } })])
  })
})

describe('needs', () => {
  test('of one node and module, with every field', async () => {
    const reply = await askVerb(nc, { what: 'needs', node: 'ace', module: 'gitea' })
    expect(keys(reply.body)).toEqual(['ace.gitea.bound.forge-account', 'ace.gitea.config.settings', 'ace.gitea.port.8080', 'ace.gitea.secret.db-password'])
    expect(reply.body.entries[3]).toEqual({
      key: 'ace.gitea.secret.db-password',
      node: 'ace',
      module: 'gitea',
      kind: 'secret',
      name: 'db-password',
      value: { file: '/run/secrets/gitea/db-password', owner: 65534 },
      revision: expect.any(Number),
      updated: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    })
    expect(reply.body.total).toBe(4)
    expect(reply.body.outOfShape).toEqual([{ key: 'ace.gitea', revision: expect.any(Number), reason: 'needs keys are <node>.<module>.<kind>.<name>: this one has 2 tokens' }])
  })

  test('by name across nodes and modules: who needs forge-account', async () => {
    const reply = await askVerb(nc, { what: 'needs', name: 'forge-account' })
    expect(reply.code).toBe(200)
    expect(reply.body.entries.length).toBeGreaterThan(0)
    expect(reply.body.entries.every((e: { name: string }) => e.name === 'forge-account')).toBe(true)
    expect(reply.body.total).toBe(reply.body.entries.length)
  })

  test('a Go struct marshalled without omitempty: its zero values count as not given', async () => {
    const zero = { what: '', node: '', module: '', contributor: '', kind: '', name: '', collection: '', after: '', limit: 0 }
    expect(await askVerb(nc, zero)).toEqual(await askVerb(nc, { what: 'registry' }))
    expect(await askVerb(nc, { ...zero, what: 'needs', node: 'ace', module: 'gitea' })).toEqual(await askVerb(nc, { what: 'needs', node: 'ace', module: 'gitea' }))
  })

  test('narrowed by kind across nodes; revision is the last the answer reflects', async () => {
    const reply = await askVerb(nc, { what: 'needs', kind: 'secret' })
    expect(reply.body.entries.every((e: { kind: string }) => e.kind === 'secret')).toBe(true)
    expect(keys(reply.body)).toEqual([...keys(reply.body)].sort())
    const status = svc.views.status().needs
    expect(reply.body.revision).toBe(status.revision)
    expect(Math.max(...reply.body.entries.map((e: { revision: number }) => e.revision))).toBeLessThanOrEqual(reply.body.revision)
  })

  test('values that are not JSON are answered, said, never dropped', async () => {
    const reply = await askVerb(nc, { what: 'needs', node: 'shanks', module: 'mail', kind: 'secret' })
    const byKey = Object.fromEntries(reply.body.entries.map((e: { key: string }) => [e.key, e]))
    expect(byKey['shanks.mail.secret.dkim']).toMatchObject({ raw: 'plain text, not JSON', problem: expect.stringContaining('not JSON') })
    expect(byKey['shanks.mail.secret.blob']).toMatchObject({ rawBase64: Buffer.from([0xff, 0xfe, 0x00, 0x01]).toString('base64'), problem: expect.stringContaining('not UTF-8') })
    expect(byKey['shanks.mail.secret.blob']).not.toHaveProperty('value')
  })

  test('a filter that matches nothing is an empty answer, not an error', async () => {
    const reply = await askVerb(nc, { what: 'needs', node: 'nowhere' })
    expect(reply.code).toBe(200)
    expect(reply.body).toMatchObject({ total: 0, entries: [], outOfShape: [] })
  })
})

describe('applied', () => {
  test('every node and module, with the key out of shape said', async () => {
    const reply = await askVerb(nc, { what: 'applied' })
    const expected = NODES.flatMap((node, n) => MODULES.flatMap((module, m) => ((n + m) % 3 === 2 ? [] : [`${node}.${module}`]))).sort()
    expect(keys(reply.body)).toEqual(expected)
    expect(reply.body.outOfShape).toEqual([{ key: 'g14.wireguard.extra', revision: expect.any(Number), reason: 'applied keys are <node>.<module>: this one has 3 tokens' }])
  })

  test('a filter leaves out an out-of-shape key only when its token contradicts it', async () => {
    expect((await askVerb(nc, { what: 'applied', node: 'g14' })).body.outOfShape).toHaveLength(1)
    expect((await askVerb(nc, { what: 'applied', node: 'ace' })).body.outOfShape).toHaveLength(0)
    expect((await askVerb(nc, { what: 'applied', module: 'wireguard' })).body.outOfShape).toHaveLength(1)
  })
})

describe('collect', () => {
  test('by decoded collection name, answered decoded', async () => {
    const reply = await askVerb(nc, { what: 'collect', node: 'ace', collection: 'shell:zsh:normal' })
    expect(reply.body.entries.length).toBeGreaterThan(3)
    for (const e of reply.body.entries) {
      expect(e).toMatchObject({ node: 'ace', collection: 'shell:zsh:normal', key: `ace.shell=3Azsh=3Anormal.${e.contributor}` })
    }
  })

  test('module is the contributor, and contributor its alias', async () => {
    const a = await askVerb(nc, { what: 'collect', module: 'gitea', collection: 'contribution:route=proxy' })
    const b = await askVerb(nc, { what: 'collect', contributor: 'gitea', collection: 'contribution:route=proxy' })
    expect(keys(a.body)).toEqual(NODES.map((n) => `${n}.contribution=3Aroute=3Dproxy.gitea`).sort())
    expect(b.body).toEqual(a.body)
  })

  test('a malformed escape is out of shape, with its reason', async () => {
    const reply = await askVerb(nc, { what: 'collect', node: 'shanks' })
    expect(reply.body.outOfShape).toEqual([{ key: 'shanks.shell=3azsh.gitea', revision: expect.any(Number), reason: expect.stringContaining('two upper-case hex digits') }])
  })
})

describe('bad requests are refused with the micro error headers and a body naming the field', () => {
  test.each([
    ['not JSON', '{what:', undefined, /the payload is not JSON .* send a JSON object/],
    ['not UTF-8', new Uint8Array([0xff, 0x7b]), undefined, /not UTF-8/],
    ['an array', '[]', undefined, /must be a JSON object/],
    ['a string', '"needs"', undefined, /must be a JSON object/],
    ['an unknown what', { what: 'secrets' }, 'what', /what: "secrets" will not do; it takes one of registry, needs, applied, collect/],
    ['an unknown field', { what: 'needs', nodes: 'ace' }, 'nodes', /"nodes" is not a request field/],
    ['a wrong type', { what: 'needs', limit: '10' }, 'limit', /limit: "10" will not do; it takes a whole number from 1 to 10000/],
    ['a node no token could hold', { what: 'needs', node: 'ace.gitea' }, 'node', /node: "ace.gitea" will not do; it takes one key token/],
    ['a field that does not apply', { what: 'applied', collection: 'shell' }, 'collection', /collection does not narrow what=applied; applied takes node, module, after, limit, since/],
    ['kind for collect', { what: 'collect', kind: 'shell' }, 'kind', /kind does not narrow what=collect/],
    // The fields of the bucket asked, not those of every bucket.
    ['a by no bucket counts', { what: 'needs', by: 'name' }, 'by', /^by: "name" is no field of needs whose values are counted; needs takes by = node, module, kind$/],
    ['a by another bucket counts', { what: 'applied', by: 'collection' }, 'by', /^by: "collection" is no field of applied whose values are counted; applied takes by = node, module$/],
    // Deeper than JSON.stringify's stack goes: bad input (400, nothing logged), never a 500 with a stack trace.
    ['arrays nested thousands deep', `${'['.repeat(5000)}${']'.repeat(5000)}`, undefined, /must be a JSON object .*; got \[\.\.\.\] \(nested too deep to show\)$/],
    ['a field nested thousands deep', `{"what":${'['.repeat(5000)}${']'.repeat(5000)}}`, 'what', /^what: \[\.\.\.\] \(nested too deep to show\) will not do/],
    ['a key longer than 1024 bytes is a key like any other', { what: 'needs', after: `ace.gitea.secret.${'x'.repeat(2000)}`, limit: 'x' }, 'limit', /limit: "x" will not do/]
  ])('%s', async (_, request, field, message) => {
    const reply = await askVerb(nc, request)
    expect(reply.code).toBe(400)
    expect(reply.error).toMatch(message)
    expect(reply.body).toEqual({ error: { code: 'BAD_REQUEST', message: reply.error, ...(field ? { field } : {}) } })
  })

  test('the service is still there afterwards', async () => {
    expect((await askVerb(nc, { what: 'needs', node: 'ace', module: 'gitea' })).body.total).toBe(4)
  })
})

describe('discovery ($SRV)', () => {
  test('PING, INFO and STATS find the service, its version, description and schemas', async () => {
    const ping = JSON.parse((await nc.request('$SRV.PING.mesh-provisioner', '', { timeout: 2000 })).string())
    expect(ping).toMatchObject({ type: 'io.nats.micro.v1.ping_response', name: 'mesh-provisioner', version: '0.0.0-test' })
    const info = JSON.parse((await nc.request('$SRV.INFO.mesh-provisioner', '', { timeout: 2000 })).string())
    expect(info.description).toMatch(/provisioner/)
    expect(info.endpoints).toHaveLength(1)
    const endpoint = info.endpoints[0]
    expect(endpoint).toMatchObject({ name: 'provisioning', subject: 'mesh-provisioner.provisioning', queue_group: 'mesh-provisioner' })
    const requestSchema = JSON.parse(endpoint.metadata.request_schema)
    expect(Object.keys(requestSchema.properties)).toEqual(['what', 'node', 'module', 'contributor', 'kind', 'name', 'collection', 'after', 'limit', 'since', 'by', 'state'])
    // A filter field takes one value or several (docs/verb.md).
    for (const field of ['node', 'module', 'contributor', 'kind', 'name', 'collection']) {
      expect(requestSchema.properties[field].anyOf.map((s: { type: string }) => s.type), field).toEqual(['string', 'array'])
    }
    expect(JSON.parse(endpoint.metadata.response_schema).anyOf).toHaveLength(10)
    const stats = JSON.parse((await nc.request('$SRV.STATS.mesh-provisioner', '', { timeout: 2000 })).string())
    expect(stats.endpoints[0].num_requests).toBeGreaterThan(10)
  })
})

describe('PROVISIONING_SUBJECT', () => {
  test('moves the verb to another subject (the shipped grants name the default: a moved verb needs its own)', async () => {
    const lx = fixture()
    const server = await lx.server({ token: 'lab-token' })
    const client = await lx.admin(server)
    const lab = await lx.service(server, { PROVISIONING_SUBJECT: 'lab.mesh-provisioner.provisioning' })
    await untilReady(lab)
    const reply = await askVerb(client, { what: 'registry', kind: 'secret' }, 'lab.mesh-provisioner.provisioning')
    expect(reply).toMatchObject({ code: 200, body: { what: 'registry' } })
    await expect(client.request('mesh-provisioner.provisioning', '', { timeout: 500 })).rejects.toThrow(/503|no responders/i)
  })
})
