// The typed client: clients/typescript/openapi.ts is what openapi-typescript makes of the committed
// OpenAPI document; the console's example (clients/typescript/console.ts) and the no-`unknown`
// checks (test/typed-client.types.ts) type-check against it; and the example's calls get real
// answers from a service, typed as the contract says.

import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { beforeAll, describe, expect, test, vi } from 'vitest'
import { consoleClient, describeModule, describeNeed, type NeedsEvent } from '../clients/typescript/console.js'
import { asyncApiTypes, openApiTypes } from '../scripts/openapi-types.js'
import { startSeeded, suiteFixture, type Seeded } from './support/service.js'

const file = (path: string): string => fileURLToPath(new URL(path, import.meta.url))

describe('the typed client', () => {
  test('is committed as openapi-typescript makes it from openapi/openapi.json and asyncapi/asyncapi.json (run `npm run openapi`)', async () => {
    expect(await readFile(file('../clients/typescript/openapi.ts'), 'utf8')).toBe(await openApiTypes(await readFile(file('../openapi/openapi.json'), 'utf8')))
    expect(await readFile(file('../clients/typescript/asyncapi.ts'), 'utf8')).toBe(await asyncApiTypes(await readFile(file('../asyncapi/asyncapi.json'), 'utf8')))
  })

  test('type-checks the console\'s calls, with no `unknown` in any answer or event', () => {
    const config = ts.getParsedCommandLineOfConfigFile(file('../tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(String(d.messageText)) } })
    if (config === undefined) throw new Error('tsconfig.json unread')
    const program = ts.createProgram([file('../clients/typescript/console.ts'), file('./typed-client.types.ts')], config.options)
    const problems = ts.getPreEmitDiagnostics(program).map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)
    expect(problems).toEqual([])
  }, 30_000)
})

describe('the console\'s calls against a service', () => {
  const fx = suiteFixture()
  let seeded: Seeded
  beforeAll(async () => { seeded = await startSeeded(fx) }, 30_000)

  test('read the registry, a node\'s needs and one need, then follow its needs until synced', async () => {
    const client = consoleClient(seeded.running.url)
    const registry = await client.registry()
    expect(registry.entries.map((e) => e.kind)).toContain('secret')
    const needs = await client.needsOf('ace')
    expect(needs.entries.every((e) => e.node === 'ace')).toBe(true)
    const need = await client.need('ace', 'gitea', 'secret', 'db-password')
    expect(describeNeed(need)).toBe('ace/gitea needs secret db-password: {"file":"/run/secrets/gitea/db-password","owner":65534}')

    const abort = new AbortController()
    const events: NeedsEvent[] = []
    for await (const e of client.followNeeds('ace', abort.signal)) {
      events.push(e)
      if (e.type === 'synced') {
        expect(e.data.total).toBe(needs.total)
        expect(e.id).toBe(e.data.cursor)
        break
      }
    }
    abort.abort()
    expect(events.filter((e) => e.type === 'put').map((e) => e.type === 'put' && e.data.key)).toEqual(needs.entries.map((e) => e.key))
  })

  test('read the overview and the pending modules: a need written after its module was applied shows as pending', async () => {
    const client = consoleClient(seeded.running.url)
    const before = await client.overview()
    expect(before.nodes.map((n) => n.node)).toEqual(['ace', 'g14', 'novox', 'shanks'])
    expect(before.nodes.every((n) => n.modules.pending === 0)).toBe(true)
    expect((await client.pendingModules()).modules).toEqual([])

    const kv = await seeded.nc.jetstream().views.kv('mesh-provisioner_needs')
    await kv.put('novox.postgres.secret.replica-password', JSON.stringify({ file: '/run/secrets/postgres/replica-password' }))
    const pending = await vi.waitFor(async () => {
      const answer = await client.pendingModules()
      expect(answer.total).toBe(1)
      return answer
    })
    const row = pending.modules[0]
    expect(row).toMatchObject({ node: 'novox', module: 'postgres', state: 'pending', needs: 4, applied: { revision: expect.any(Number) as number } })
    if (row === undefined || row.applied === null) throw new Error('no pending row with its applied entry')
    expect(row.needsUpdated !== null && row.needsUpdated > row.applied.updated).toBe(true)
    expect(describeModule(row)).toBe(`novox/postgres pending: 4 needs, last written ${row.needsUpdated ?? ''}, applied ${row.applied.updated} (revision ${row.applied.revision})`)
    const novox = (await client.overview()).nodes.find((n) => n.node === 'novox')
    expect(novox?.modules).toMatchObject({ pending: 1 })
  })
})
