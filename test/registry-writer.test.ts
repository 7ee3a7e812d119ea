// The registry writer against a real bucket: writes only what differs, deletes what no domain
// answers, and two writers with one table converge without moving a revision.

import { expect, test } from 'vitest'
import type { KV, NatsConnection } from 'nats'
import type { NatsServer } from '../testkit/nats-server.js'
import { fixture, untilRan, untilWritten, type Fixture } from './support/service.js'
import { BUCKETS } from '../src/domain/wire/key-shapes.js'
import { canonicalJson, compileRegistry } from '../src/domain/registry/registry.js'
import { DEFAULT_DOMAINS } from '../src/domain/registry/registry-table.js'

async function setup (): Promise<{ fx: Fixture, server: NatsServer, nc: NatsConnection }> {
  const fx = fixture()
  const server = await fx.server()
  return { fx, server, nc: await fx.admin(server) }
}

async function revisions (kv: KV): Promise<Record<string, number>> {
  const keys: string[] = []
  for await (const k of await kv.keys()) keys.push(k)
  const out: Record<string, number> = {}
  for (const k of keys.sort()) out[k] = (await kv.get(k))?.revision as number
  return out
}

const compiled = compileRegistry(DEFAULT_DOMAINS)

test('creates its bucket, writes every kind as canonical JSON, then leaves unchanged kinds alone', async () => {
  const { fx, server, nc } = await setup()
  const svc = await fx.service(server)
  const first = await untilRan(svc)
  expect(first).toMatchObject({ ok: true, left: [], deleted: [] })
  expect(first.wrote.sort()).toEqual([...compiled.keys()].sort())

  const kv = await nc.jetstream().views.kv(BUCKETS.registry, { bindOnly: true })
  for (const [kind, { value }] of compiled) {
    expect((await kv.get(kind))?.string()).toBe(canonicalJson(value))
  }
  const before = await revisions(kv)
  const second = await svc.writer.run()
  expect(second).toMatchObject({ ok: true, wrote: [], deleted: [] })
  expect(second.left.sort()).toEqual([...compiled.keys()].sort())
  expect(await revisions(kv)).toEqual(before)
})

test('rewrites a kind whose bytes differ, deletes kinds no domain answers, keeps the rest', async () => {
  const { fx, server, nc } = await setup()
  const svc = await fx.service(server)
  await untilWritten(svc)
  const kv = await nc.jetstream().views.kv(BUCKETS.registry, { bindOnly: true })
  await kv.put('secret', '{"kind":"secret","module":"someone-else","verb":"x"}')
  await kv.put('obsolete', '{"kind":"obsolete","module":"gone","verb":"gone.v"}')
  await kv.put('odd.key', '{}')
  const before = await revisions(kv)

  const run = await svc.writer.run()
  expect(run).toMatchObject({ ok: true, wrote: ['secret'] })
  expect(run.deleted.sort()).toEqual(['obsolete', 'odd.key'])
  const after = await revisions(kv)
  expect(Object.keys(after)).toEqual([...compiled.keys()].sort())
  for (const kind of compiled.keys()) if (kind !== 'secret') expect(after[kind]).toBe(before[kind])
  expect((await kv.get('secret'))?.string()).toBe('{"kind":"secret","module":"mesh-vault","verb":"mesh-vault.secret"}')
})

test('two writers with one table converge and never flap', async () => {
  const { fx, server, nc } = await setup()
  const a = await fx.service(server)
  await untilWritten(a)
  const kv = await nc.jetstream().views.kv(BUCKETS.registry, { bindOnly: true })
  const settled = await revisions(kv)
  const b = await fx.service(server)
  const bFirst = await untilRan(b)
  expect(bFirst).toMatchObject({ ok: true, wrote: [], deleted: [] })
  await Promise.all([a.writer.run(), b.writer.run(), a.writer.run(), b.writer.run()])
  expect(await revisions(kv)).toEqual(settled)
})

test('a domain table file replaces the compiled one; kinds it does not answer are deleted', async () => {
  const { fx, server, nc } = await setup()
  const a = await fx.service(server)
  await untilWritten(a)
  await a.stop()
  const { writeFile } = await import('node:fs/promises')
  const file = `${server.dir}/domains.json`
  await writeFile(file, JSON.stringify([{ kinds: ['secret'], module: 'mesh-vault', verb: 'mesh-vault.secret', note: 'the lab table' }]))
  const b = await fx.service(server, { REGISTRY_DOMAINS_FILE: file })
  const run = await untilRan(b)
  expect(run).toMatchObject({ ok: true, wrote: ['secret'] })
  expect(run.deleted).toHaveLength(12)
  const kv = await nc.jetstream().views.kv(BUCKETS.registry, { bindOnly: true })
  expect(Object.keys(await revisions(kv))).toEqual(['secret'])
})

test('told not to create its bucket, it waits for one and retries sooner than the period', async () => {
  const { fx, server, nc } = await setup()
  const svc = await fx.service(server, { REGISTRY_CREATE_BUCKET: 'false' })
  const failed = await untilRan(svc)
  expect(failed.ok).toBe(false)
  expect(Date.parse(failed.nextAt as string) - Date.parse(failed.at)).toBeLessThan(60_000)
  await nc.jetstream().views.kv(BUCKETS.registry, { history: 1 })
  const ok = await untilWritten(svc, 20_000)
  expect(ok.wrote).toHaveLength(13)
})
