// The answer document built from contents (no NATS here: entries are applied as a watch would).

import { describe, expect, test } from 'vitest'
import { keyOf, type What } from './buckets.js'
import { createProvisioning } from './provisioning.js'
import { Contents, type Change } from './contents.js'
import type { Views } from './views.js'

let revision = 0
function put (c: Contents, key: string, value: string | Uint8Array, operation: Change['operation'] = 'PUT'): void {
  c.apply({ key, value: typeof value === 'string' ? new TextEncoder().encode(value) : value, revision: ++revision, created: new Date(Date.UTC(2026, 10, 29, 9, 40)), operation })
}

function provisioningOver (what: What, contents: Contents, stale = false) {
  const view = { read: () => contents, stale }
  return createProvisioning({ byWhat: { [what]: view } } as unknown as Views)
}

function parse (json: string) {
  return JSON.parse(json) as { entries: Array<Record<string, unknown>>, outOfShape: Array<Record<string, unknown>>, total: number, next?: string, cut?: { reason: string, omitted: number }, revision: number, stale: boolean, outOfShapeOmitted?: number }
}

describe('needs', () => {
  const c = new Contents('needs', 'now')
  for (const node of ['n1', 'n2', 'n1-b']) {
    for (const module of ['gitea', 'mail']) {
      for (const kind of ['secret', 'port']) put(c, keyOf('needs', { node, module, kind, name: 'x' }), `{"n":"${node}"}`)
    }
  }
  put(c, 'n1.gitea', '{}')
  put(c, 'n2.mail.secret', '{}')
  put(c, 'n1.mail.secret.x', '', 'DEL')
  put(c, 'n1.gitea.text.x', 'not json')
  put(c, 'n1.gitea.bin.x', new Uint8Array([0xff]))
  c.buildIndexes()
  const last = revision
  const p = provisioningOver('needs', c)

  test('the answer document, sorted by key, with every field', () => {
    const a = parse(p.ask({ what: 'needs', filter: { node: 'n1', module: 'gitea' } }).json)
    expect(a).toMatchObject({ what: 'needs', bucket: 'mesh-provisioner_needs', revision: last, total: 4, stale: false })
    expect(a.entries.map((e) => e['key'])).toEqual(['n1.gitea.bin.x', 'n1.gitea.port.x', 'n1.gitea.secret.x', 'n1.gitea.text.x'])
    expect(a.entries[1]).toEqual({ key: 'n1.gitea.port.x', node: 'n1', module: 'gitea', kind: 'port', name: 'x', value: { n: 'n1' }, revision: expect.any(Number), updated: '2026-11-29T09:40:00.000Z' })
    expect(a.entries[0]).toMatchObject({ rawBase64: '/w==', problem: expect.stringMatching(/not UTF-8/) })
    expect(a.entries[3]).toMatchObject({ raw: 'not json', problem: expect.stringMatching(/not JSON/) })
    expect(a.entries[3]).not.toHaveProperty('value')
    expect(a.next).toBeUndefined()
    expect(a.cut).toBeUndefined()
  })

  test('sorting is by the key text: n1-b sorts before n1.', () => {
    const a = parse(p.ask({ what: 'needs', filter: { kind: 'secret' } }).json)
    expect(a.entries.map((e) => e['key'])).toEqual(['n1-b.gitea.secret.x', 'n1-b.mail.secret.x', 'n1.gitea.secret.x', 'n2.gitea.secret.x', 'n2.mail.secret.x'])
  })

  test('deleted keys are not entries', () => {
    expect(parse(p.ask({ what: 'needs', filter: { node: 'n1', module: 'mail' } }).json).entries.map((e) => e['key'])).toEqual(['n1.mail.port.x'])
  })

  test('out-of-shape keys are listed unless a token they have contradicts the filter', () => {
    const keys = (filter: Record<string, string>) => parse(p.ask({ what: 'needs', filter }).json).outOfShape.map((o) => o['key'])
    expect(keys({})).toEqual(['n1.gitea', 'n2.mail.secret'])
    expect(keys({ node: 'n1' })).toEqual(['n1.gitea'])
    expect(keys({ node: 'n2', kind: 'secret' })).toEqual(['n2.mail.secret'])
    expect(keys({ node: 'n1', kind: 'secret' })).toEqual(['n1.gitea'])
    expect(keys({ module: 'mail' })).toEqual(['n2.mail.secret'])
    expect(parse(p.ask({ what: 'needs', filter: {} }).json).outOfShape[0]).toEqual({ key: 'n1.gitea', revision: expect.any(Number), reason: 'needs keys are <node>.<module>.<kind>.<name>: this one has 2 tokens' })
  })

  test('limit cuts and next continues, every key exactly once', () => {
    for (const filter of [{}, { kind: 'secret' }, { node: 'n1' }, { node: 'n1', kind: 'port' }] as Array<Record<string, string>>) {
      const all = parse(p.ask({ what: 'needs', filter }).json).entries.map((e) => e['key'])
      const seen: unknown[] = []
      let after: string | undefined
      for (let page = 0; page < 20; page++) {
        const a = parse(p.ask({ what: 'needs', filter, limit: 2, ...(after === undefined ? {} : { after }) }).json)
        expect(a.total).toBe(all.length)
        seen.push(...a.entries.map((e) => e['key']))
        if (!a.cut) break
        expect(a.cut).toEqual({ reason: 'limit', omitted: all.length - seen.length })
        after = a.next
      }
      expect(seen).toEqual(all)
    }
  })

  test('an answer never exceeds maxBytes: it is cut for payload and pages to the end', () => {
    const maxBytes = 1500
    const all = parse(p.ask({ what: 'needs', filter: {} }).json).entries.map((e) => e['key'])
    const seen: unknown[] = []
    let after: string | undefined
    for (let page = 0; page < 50; page++) {
      const answer = p.ask({ what: 'needs', filter: {}, ...(after === undefined ? {} : { after }) }, { maxBytes })
      expect(Buffer.byteLength(answer.json)).toBeLessThanOrEqual(maxBytes)
      const a = parse(answer.json)
      seen.push(...a.entries.map((e) => e['key']))
      if (!a.cut) break
      expect(a.cut.reason).toBe('payload')
      expect(a.cut.omitted).toBe(all.length - seen.length)
      after = a.next
    }
    expect(seen).toEqual(all)
  })

  test('stale is said', () => {
    expect(parse(provisioningOver('needs', c, true).ask({ what: 'needs', filter: {} }).json).stale).toBe(true)
  })
})

describe('collect', () => {
  const c = new Contents('collect', 'now')
  put(c, keyOf('collect', { node: 'n1', collection: 'shell:zsh:normal', contributor: 'gitea' }), '{}')
  put(c, keyOf('collect', { node: 'n1', collection: 'shell:zsh:normal', contributor: 'mail' }), '{}')
  put(c, keyOf('collect', { node: 'n2', collection: 'environment', contributor: 'gitea' }), '{}')
  put(c, 'n1.shell=3azsh.gitea', '{}')
  c.buildIndexes()
  const p = provisioningOver('collect', c)

  test('narrowed by the decoded collection name and the contributor', () => {
    const a = parse(p.ask({ what: 'collect', filter: { collection: 'shell:zsh:normal', contributor: 'gitea' } }).json)
    expect(a.entries).toEqual([{ key: 'n1.shell=3Azsh=3Anormal.gitea', node: 'n1', collection: 'shell:zsh:normal', contributor: 'gitea', value: {}, revision: expect.any(Number), updated: expect.any(String) }])
    // Its collection token "shell=3azsh" is not how shell:zsh:normal is written: a contradiction.
    expect(a.outOfShape).toEqual([])
    expect(parse(p.ask({ what: 'collect', filter: { contributor: 'gitea' } }).json).outOfShape.map((o) => o['key'])).toEqual(['n1.shell=3azsh.gitea'])
    expect(parse(p.ask({ what: 'collect', filter: { contributor: 'mail' } }).json).outOfShape).toEqual([])
  })
})

describe('changes after the snapshot', () => {
  const c = new Contents('needs', 'now')
  const key = keyOf('needs', { node: 'n1', module: 'gitea', kind: 'secret', name: 'x' })
  put(c, key, '{"v":1}')
  put(c, 'n1.gitea.odd', '{}')
  c.buildIndexes()
  const p = provisioningOver('needs', c)
  const keysOf = (filter: Record<string, string>): unknown[] => parse(p.ask({ what: 'needs', filter }).json).entries.map((e) => e['key'])

  test('an update replaces the value and keeps the key in every index it was in', () => {
    put(c, key, '{"v":2}')
    for (const filter of [{}, { node: 'n1' }, { module: 'gitea' }, { kind: 'secret' }, { node: 'n1', module: 'gitea' }, { node: 'n1', kind: 'secret' }] as Array<Record<string, string>>) {
      expect(keysOf(filter)).toContain(key)
    }
    expect(parse(p.ask({ what: 'needs', filter: { kind: 'secret' } }).json).entries).toEqual([expect.objectContaining({ key, value: { v: 2 }, revision })])
  })

  test('a delete takes the key out of every index, and a put brings it back', () => {
    put(c, key, '', 'DEL')
    for (const filter of [{}, { node: 'n1' }, { kind: 'secret' }, { node: 'n1', kind: 'secret' }] as Array<Record<string, string>>) expect(keysOf(filter)).not.toContain(key)
    put(c, key, '{"v":3}')
    expect(parse(p.ask({ what: 'needs', filter: { node: 'n1', kind: 'secret' } }).json).entries).toEqual([expect.objectContaining({ key, value: { v: 3 } })])
  })

  test('an out-of-shape key is updated and deleted in place', () => {
    put(c, 'n1.gitea.odd', 'not json')
    expect(parse(p.ask({ what: 'needs', filter: {} }).json).outOfShape).toEqual([expect.objectContaining({ key: 'n1.gitea.odd', revision })])
    put(c, 'n1.gitea.odd', '', 'PURGE')
    expect(parse(p.ask({ what: 'needs', filter: {} }).json).outOfShape).toEqual([])
  })
})

test('a value that is not UTF-8 is held as a copy of its bytes until it is answered', () => {
  const c = new Contents('applied', 'now')
  const bytes = new Uint8Array([0xff, 0x01])
  put(c, 'n1.bin', bytes)
  c.buildIndexes()
  bytes[0] = 0x41
  expect(parse(provisioningOver('applied', c).ask({ what: 'applied', filter: {} }).json).entries[0]).toMatchObject({ rawBase64: Buffer.from([0xff, 0x01]).toString('base64') })
})

describe('an entry larger than an answer may carry', () => {
  test('is answered with a problem instead of its value, so paging goes on', () => {
    const c = new Contents('applied', 'now')
    put(c, 'n1.big', JSON.stringify({ blob: 'x'.repeat(5000) }))
    put(c, 'n1.small', '{}')
    c.buildIndexes()
    const a = parse(provisioningOver('applied', c).ask({ what: 'applied', filter: {} }, { maxBytes: 2000 }).json)
    expect(a.entries[0]).toMatchObject({ key: 'n1.big', node: 'n1', module: 'big', problem: expect.stringMatching(/more than one answer here may carry/) })
    expect(a.entries[0]).not.toHaveProperty('value')
    expect(a.entries[1]).toMatchObject({ key: 'n1.small', value: {} })
  })
})

test('out-of-shape keys beyond what fits are counted', () => {
  const c = new Contents('registry', 'now')
  for (let i = 0; i < 1200; i++) put(c, `odd.${i}`, '{}')
  c.buildIndexes()
  const a = parse(provisioningOver('registry', c).ask({ what: 'registry', filter: {} }).json)
  expect(a.outOfShape).toHaveLength(1000)
  expect(a.outOfShapeOmitted).toBe(200)
})

test('a repeated question is answered from the last build until the bucket moves or staleness changes', () => {
  const c = new Contents('applied', 'now')
  put(c, 'n1.a', '{}')
  c.buildIndexes()
  const view = { read: () => c, stale: false }
  const p = createProvisioning({ byWhat: { applied: view } } as unknown as Views)
  const first = p.ask({ what: 'applied', filter: { node: 'n1' } })
  expect(p.ask({ what: 'applied', filter: { node: 'n1' } })).toBe(first)
  expect(p.ask({ what: 'applied', filter: { node: 'n1' }, limit: 1 })).not.toBe(first)
  put(c, 'n1.b', '{}')
  const moved = p.ask({ what: 'applied', filter: { node: 'n1' } })
  expect(parse(moved.json).entries.map((e) => e['key'])).toEqual(['n1.a', 'n1.b'])
  view.stale = true
  expect(parse(p.ask({ what: 'applied', filter: { node: 'n1' } }).json).stale).toBe(true)
})
