// The answer document built from contents (no NATS here: entries are applied as a watch would).

import fc from 'fast-check'
import { describe, expect, test, vi } from 'vitest'
import type { KvEntry } from 'nats'
import { keyOf, type What } from '../wire/key-shapes.js'
import { formatCursor, generationOf, parseCursor } from '../wire/cursor.js'
import { createProvisioning, type Provisioning } from './provisioning.js'
import type { Filter } from '../wire/request.js'
import { Contents } from '../store/contents.js'
import type { AnsweredViews } from './port.js'

let revision = 0
const CREATED = '2026-11-29T09:40:00.123456789Z'
function put (c: Contents, key: string, value: string | Uint8Array, operation: 'PUT' | 'DEL' | 'PURGE' = 'PUT'): void {
  c.apply({ key, value: typeof value === 'string' ? new TextEncoder().encode(value) : value, revision: ++revision, created: new Date(Date.UTC(2026, 10, 29, 9, 40)), operation, bucket: 'b', delta: 0, length: 0 } as unknown as KvEntry)
}

function provisioningOver (what: What, contents: Contents, stale = false) {
  const view = { read: () => contents, stale }
  return createProvisioning({ byWhat: { [what]: view } } as unknown as AnsweredViews)
}

function parse (json: string) {
  return JSON.parse(json) as { cursor?: string, deleted?: Array<Record<string, unknown>>, entries: Array<Record<string, unknown>>, outOfShape: Array<Record<string, unknown>>, total: number, next?: string, cut?: { reason: string, omitted: number }, revision: number, stale: boolean, outOfShapeOmitted?: number }
}

describe('needs', () => {
  const c = new Contents('needs', CREATED)
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
    const a = parse(p.ask({ what: 'needs', filter: { node: ['n1'], module: ['gitea'] } }).json)
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
    const a = parse(p.ask({ what: 'needs', filter: { kind: ['secret'] } }).json)
    expect(a.entries.map((e) => e['key'])).toEqual(['n1-b.gitea.secret.x', 'n1-b.mail.secret.x', 'n1.gitea.secret.x', 'n2.gitea.secret.x', 'n2.mail.secret.x'])
  })

  test('deleted keys are not entries', () => {
    expect(parse(p.ask({ what: 'needs', filter: { node: ['n1'], module: ['mail'] } }).json).entries.map((e) => e['key'])).toEqual(['n1.mail.port.x'])
  })

  test('out-of-shape keys are listed unless a token they have contradicts the filter', () => {
    const keys = (filter: Filter) => parse(p.ask({ what: 'needs', filter }).json).outOfShape.map((o) => o['key'])
    expect(keys({})).toEqual(['n1.gitea', 'n2.mail.secret'])
    expect(keys({ node: ['n1'] })).toEqual(['n1.gitea'])
    expect(keys({ node: ['n2'], kind: ['secret'] })).toEqual(['n2.mail.secret'])
    expect(keys({ node: ['n1'], kind: ['secret'] })).toEqual(['n1.gitea'])
    expect(keys({ module: ['mail'] })).toEqual(['n2.mail.secret'])
    expect(parse(p.ask({ what: 'needs', filter: {} }).json).outOfShape[0]).toEqual({ key: 'n1.gitea', revision: expect.any(Number), reason: 'needs keys are <node>.<module>.<kind>.<name>: this one has 2 tokens' })
  })

  test('limit cuts and next continues, every key exactly once', () => {
    for (const filter of [{}, { kind: ['secret'] }, { node: ['n1'] }, { node: ['n1'], kind: ['port'] }] as Filter[]) {
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
  const c = new Contents('collect', CREATED)
  put(c, keyOf('collect', { node: 'n1', collection: 'shell:zsh:normal', contributor: 'gitea' }), '{}')
  put(c, keyOf('collect', { node: 'n1', collection: 'shell:zsh:normal', contributor: 'mail' }), '{}')
  put(c, keyOf('collect', { node: 'n2', collection: 'environment', contributor: 'gitea' }), '{}')
  put(c, 'n1.shell=3azsh.gitea', '{}')
  c.buildIndexes()
  const p = provisioningOver('collect', c)

  test('narrowed by the decoded collection name and the contributor', () => {
    const a = parse(p.ask({ what: 'collect', filter: { collection: ['shell:zsh:normal'], contributor: ['gitea'] } }).json)
    expect(a.entries).toEqual([{ key: 'n1.shell=3Azsh=3Anormal.gitea', node: 'n1', collection: 'shell:zsh:normal', contributor: 'gitea', value: {}, revision: expect.any(Number), updated: expect.any(String) }])
    // Its collection token "shell=3azsh" is not how shell:zsh:normal is written: a contradiction.
    expect(a.outOfShape).toEqual([])
    expect(parse(p.ask({ what: 'collect', filter: { contributor: ['gitea'] } }).json).outOfShape.map((o) => o['key'])).toEqual(['n1.shell=3azsh.gitea'])
    expect(parse(p.ask({ what: 'collect', filter: { contributor: ['mail'] } }).json).outOfShape).toEqual([])
  })
})

describe('changes after the snapshot', () => {
  const c = new Contents('needs', CREATED)
  const key = keyOf('needs', { node: 'n1', module: 'gitea', kind: 'secret', name: 'x' })
  put(c, key, '{"v":1}')
  put(c, 'n1.gitea.odd', '{}')
  c.buildIndexes()
  const p = provisioningOver('needs', c)
  const keysOf = (filter: Filter): unknown[] => parse(p.ask({ what: 'needs', filter }).json).entries.map((e) => e['key'])

  test('an update replaces the value and keeps the key in every index it was in', () => {
    put(c, key, '{"v":2}')
    for (const filter of [{}, { node: ['n1'] }, { module: ['gitea'] }, { kind: ['secret'] }, { node: ['n1'], module: ['gitea'] }, { node: ['n1'], kind: ['secret'] }] as Filter[]) {
      expect(keysOf(filter)).toContain(key)
    }
    expect(parse(p.ask({ what: 'needs', filter: { kind: ['secret'] } }).json).entries).toEqual([expect.objectContaining({ key, value: { v: 2 }, revision })])
  })

  test('a delete takes the key out of every index, and a put brings it back', () => {
    put(c, key, '', 'DEL')
    for (const filter of [{}, { node: ['n1'] }, { kind: ['secret'] }, { node: ['n1'], kind: ['secret'] }] as Filter[]) expect(keysOf(filter)).not.toContain(key)
    put(c, key, '{"v":3}')
    expect(parse(p.ask({ what: 'needs', filter: { node: ['n1'], kind: ['secret'] } }).json).entries).toEqual([expect.objectContaining({ key, value: { v: 3 } })])
  })

  test('an out-of-shape key is updated and deleted in place', () => {
    put(c, 'n1.gitea.odd', 'not json')
    expect(parse(p.ask({ what: 'needs', filter: {} }).json).outOfShape).toEqual([expect.objectContaining({ key: 'n1.gitea.odd', revision })])
    put(c, 'n1.gitea.odd', '', 'PURGE')
    expect(parse(p.ask({ what: 'needs', filter: {} }).json).outOfShape).toEqual([])
  })
})

test('a value that is not UTF-8 is held as a copy of its bytes until it is answered', () => {
  const c = new Contents('applied', CREATED)
  const bytes = new Uint8Array([0xff, 0x01])
  put(c, 'n1.bin', bytes)
  c.buildIndexes()
  bytes[0] = 0x41
  expect(parse(provisioningOver('applied', c).ask({ what: 'applied', filter: {} }).json).entries[0]).toMatchObject({ rawBase64: Buffer.from([0xff, 0x01]).toString('base64') })
})

describe('an entry larger than an answer may carry', () => {
  test('is answered with a problem instead of its value, so paging goes on', () => {
    const c = new Contents('applied', CREATED)
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
  const c = new Contents('registry', CREATED)
  for (let i = 0; i < 1200; i++) put(c, `odd.${i}`, '{}')
  c.buildIndexes()
  const a = parse(provisioningOver('registry', c).ask({ what: 'registry', filter: {} }).json)
  expect(a.outOfShape).toHaveLength(1000)
  expect(a.outOfShapeOmitted).toBe(200)
})

test('a repeated request is answered from the last build until the bucket moves or staleness changes', () => {
  const c = new Contents('applied', CREATED)
  put(c, 'n1.a', '{}')
  c.buildIndexes()
  const view = { read: () => c, stale: false }
  const p = createProvisioning({ byWhat: { applied: view } } as unknown as AnsweredViews)
  // Asked once, an answer is not kept (recently-used.ts); asked again, it is.
  const once = p.ask({ what: 'applied', filter: { node: ['n1'] } })
  const first = p.ask({ what: 'applied', filter: { node: ['n1'] } })
  expect(first).not.toBe(once)
  expect(first.json).toBe(once.json)
  expect(p.ask({ what: 'applied', filter: { node: ['n1'] } })).toBe(first)
  expect(p.ask({ what: 'applied', filter: { node: ['n1'] }, limit: 1 })).not.toBe(first)
  put(c, 'n1.b', '{}')
  const moved = p.ask({ what: 'applied', filter: { node: ['n1'] } })
  expect(parse(moved.json).entries.map((e) => e['key'])).toEqual(['n1.a', 'n1.b'])
  view.stale = true
  expect(parse(p.ask({ what: 'applied', filter: { node: ['n1'] } }).json).stale).toBe(true)
})

describe('since: the changes after a cursor', () => {
  const ops = fc.array(fc.tuple(fc.constantFrom('PUT', 'DEL', 'PURGE'), fc.constantFrom('n1.a', 'n1.b', 'n2.a', 'n2.b', 'n1'), fc.nat(9)), { maxLength: 40 })

  test('applied to the state at the cursor, they give the state now, deletions included, and nothing else', () => {
    fc.assert(fc.property(ops, ops, fc.constantFrom<Filter>({}, { node: ['n1'] }, { module: ['b'] }), fc.integer({ min: 1, max: 3 }), (before, after, filter, limit) => {
      const c = new Contents('applied', CREATED)
      const model = new Map<string, string>()
      const play = (list: typeof before): void => {
        for (const [op, key, v] of list) {
          put(c, key, `{"v":${v}}`, op as 'PUT')
          if (op === 'PUT') model.set(key, `{"v":${v}}`)
          else model.delete(key)
        }
      }
      play(before)
      c.buildIndexes()
      const p = provisioningOver('applied', c)
      const keeps = (key: string): boolean => Object.entries(filter).every(([f, v]) => key.split('.')[f === 'node' ? 0 : 1] === undefined || v.includes(key.split('.')[f === 'node' ? 0 : 1] as string))
      let cursor = parse(p.ask({ what: 'applied', filter }).json).cursor as string
      // What a client holds: entries with their values, out-of-shape keys (no dot here) as present.
      const visible = (): Map<string, string> => new Map([...model].filter(([k]) => keeps(k)).map(([k, v]) => [k, k.includes('.') ? v : '{}']))
      const then = visible()
      const changedSince = c.revision
      play(after)
      const seen = new Map(then)
      for (let page = 0; page < 100; page++) {
        const a = parse(p.ask({ what: 'applied', filter, since: parseCursor(cursor), limit }).json)
        const revisions = [...a.entries, ...(a.deleted ?? []), ...a.outOfShape].map((e) => e['revision'] as number)
        expect(revisions.every((r) => r > changedSince)).toBe(true)
        for (const e of [...a.entries, ...a.outOfShape]) seen.set(e['key'] as string, JSON.stringify(e['value'] ?? {}).replace(/\s/g, ''))
        for (const d of a.deleted ?? []) seen.delete(d['key'] as string)
        if (!a.cut) {
          expect(a.cursor).toBe(revisions.length > 0 ? `${Math.max(...revisions)}-${generationOf(CREATED)}` : cursor)
          break
        }
        expect(revisions.length).toBe(limit)
        cursor = a.cursor as string
      }
      expect(seen).toEqual(visible())
    }))
  })

  test('entries come in revision order with their fields; a deletion has its fields, an out-of-shape one key and revision alone', () => {
    const c = new Contents('needs', CREATED)
    put(c, 'n1.m.secret.x', '{}')
    c.buildIndexes()
    const p = provisioningOver('needs', c)
    const { cursor } = parse(p.ask({ what: 'needs', filter: {} }).json)
    put(c, 'n1.m.secret.y', '{"y":1}')
    put(c, 'n1.m.secret.x', '', 'DEL')
    put(c, 'n1.odd', '{}')
    put(c, 'n1.odd', '', 'PURGE')
    put(c, 'n2.m.port.z', '{}')
    const a = parse(p.ask({ what: 'needs', filter: {}, since: parseCursor(cursor as string) }).json)
    expect(a.entries.map((e) => e['key'])).toEqual(['n1.m.secret.y', 'n2.m.port.z'])
    expect(a.deleted).toEqual([
      { key: 'n1.m.secret.x', node: 'n1', module: 'm', kind: 'secret', name: 'x', revision: expect.any(Number) },
      { key: 'n1.odd', revision: expect.any(Number) }
    ])
    expect(a.total).toBe(4)
  })

  test('a cursor of another generation is CURSOR_EXPIRED; one this instance has not reached is NOT_READY', () => {
    const c = new Contents('applied', CREATED)
    put(c, 'n1.a', '{}')
    c.buildIndexes()
    const p = provisioningOver('applied', c)
    expect(() => p.ask({ what: 'applied', filter: {}, since: { revision: 1, generation: '5' } })).toThrow(expect.objectContaining({ code: 'CURSOR_EXPIRED', field: 'since' }))
    expect(() => p.ask({ what: 'applied', filter: {}, since: { revision: c.revision + 1, generation: c.generation } })).toThrow(expect.objectContaining({ code: 'NOT_READY' }))
    // A newer generation this instance has not yet seen is waited for, like a revision ahead.
    expect(() => p.ask({ what: 'applied', filter: {}, since: { revision: 1, generation: `9${c.generation}` } })).toThrow(expect.objectContaining({ code: 'NOT_READY' }))
  })

  test('contents read again that end before the revision cursors are refused from give cursors they serve (a stream resumed from its snapshot is not refused again and again)', () => {
    const c = new Contents('needs', CREATED)
    put(c, 'n1.m.secret.x', '{}')
    c.buildIndexes()
    c.expireBefore(c.revision + 100, 'read bucket mesh-provisioner_needs again and found keys gone')
    const p = provisioningOver('needs', c)
    for (const filter of [{}, { node: ['n1'] }] as Filter[]) {
      const since = parseCursor(p.snapshot({ what: 'needs', filter }, undefined, 10).cursor)
      expect(since.revision).toBe(c.expiredBefore)
      expect(p.changes({ what: 'needs', filter, since }, 10).changes).toEqual([])
      expect(parse(p.ask({ what: 'needs', filter }).json).revision).toBe(c.expiredBefore)
    }
  })

  test('catchUp waits only for a cursor ahead: an older generation\'s is refused at once', async () => {
    const c = new Contents('applied', CREATED)
    put(c, 'n1.a', '{}')
    c.buildIndexes()
    const view = { read: () => c, stale: false, listen: () => () => {} }
    const p = createProvisioning({ byWhat: { applied: view } } as unknown as AnsweredViews)
    const timed = async (generation: string, revision: number): Promise<number> => {
      const started = Date.now()
      await p.catchUp({ what: 'applied', filter: {}, since: { revision, generation } }, 300)
      return Date.now() - started
    }
    expect(await timed('5', c.revision + 10)).toBeLessThan(100)
    expect(await timed(c.generation, c.revision)).toBeLessThan(100)
    expect(await timed(c.generation, c.revision + 1)).toBeGreaterThanOrEqual(250)
    expect(await timed(`9${c.generation}`, 1)).toBeGreaterThanOrEqual(250)
  })
})

describe('an answer\'s revision and tag move only with what it holds', () => {
  test('a write on node bob leaves node ace\'s answer, revision and tag alone; a delete on ace moves them', () => {
    const c = new Contents('needs', CREATED)
    put(c, 'ace.m.secret.a', '{}')
    put(c, 'bob.m.secret.b', '{}')
    put(c, 'gone.m.secret.c', '', 'DEL')
    c.buildIndexes()
    const p = provisioningOver('needs', c)
    const ace = { what: 'needs' as const, filter: { node: ['ace'] } }
    const before = { tag: p.tag(ace), answer: parse(p.ask(ace).json) }
    put(c, 'bob.m.secret.b', '{"v":2}')
    put(c, 'bob.m.secret.new', '{}')
    put(c, 'bob.m.secret.new', '', 'DEL')
    expect(p.tag(ace)).toBe(before.tag)
    expect(parse(p.ask(ace).json)).toEqual(before.answer)
    expect(parse(p.ask({ what: 'needs', filter: { node: ['bob'] } }).json).revision).toBe(c.revision)
    put(c, 'ace.m.secret.a', '{"v":2}')
    const updated = p.tag(ace)
    expect(updated).not.toBe(before.tag)
    expect(parse(p.ask(ace).json).entries[0]).toMatchObject({ value: { v: 2 }, revision: c.revision })
    put(c, 'ace.m.secret.a', '', 'DEL')
    expect(p.tag(ace)).not.toBe(updated)
    expect(parse(p.ask(ace).json)).toMatchObject({ revision: c.revision, total: 0 })
    expect(parse(p.ask({ what: 'needs', filter: { node: ['gone'] } }).json).revision).toBeGreaterThan(0)
  })

  test('an out-of-shape key moves only the answers that may keep it: another node\'s leaves ace\'s alone', () => {
    const c = new Contents('collect', CREATED)
    put(c, 'ace.shell=3Azsh.m', '{}')
    put(c, 'bob.shell=3Azsh.m', '{}')
    c.buildIndexes()
    const p = provisioningOver('collect', c)
    const ace = { what: 'collect' as const, filter: { node: ['ace'] } }
    const zsh = { what: 'collect' as const, filter: { node: ['ace'], collection: ['shell:zsh'] } }
    const before = { ace: p.tag(ace), zsh: p.tag(zsh) }
    put(c, 'bob.odd', '{}')
    put(c, 'bob.shell=3Azsh.m.extra', '{}')
    put(c, 'bob.odd', '', 'DEL')
    expect([p.tag(ace), p.tag(zsh)]).toEqual([before.ace, before.zsh])
    expect(parse(p.ask({ what: 'collect', filter: { node: ['bob'] } }).json).revision).toBe(c.revision)
    // Kept by ace (no token of it contradicts node=ace): ace's answer moves; ace's zsh answer keeps it too.
    put(c, 'ace', '{}')
    expect(parse(p.ask(ace).json)).toMatchObject({ revision: c.revision, outOfShape: [{ key: 'ace' }] })
    expect(parse(p.ask(zsh).json)).toMatchObject({ revision: c.revision, outOfShape: [{ key: 'ace' }] })
    const odd = c.revision
    // Another collection's out-of-shape key on ace moves ace's answer, not its zsh answer.
    put(c, 'ace.env.m.x', '{}')
    expect(parse(p.ask(ace).json).revision).toBe(c.revision)
    expect(parse(p.ask(zsh).json).revision).toBe(odd)
  })
})

describe('snapshot pages', () => {
  test('cover every entry the filter keeps once, in key order, with out-of-shape keys on the first page', () => {
    const c = new Contents('needs', CREATED)
    for (let i = 0; i < 7; i++) put(c, `n${i % 2}.m.secret.k${i}`, `{"i":${i}}`)
    put(c, 'n1.odd', '{}')
    c.buildIndexes()
    const p = provisioningOver('needs', c)
    for (const filter of [{}, { node: ['n1'] }, { node: ['n1'], name: ['k3'] }] as Filter[]) {
      const keys: string[] = []
      let after: string | undefined
      for (let page = 0; page < 10; page++) {
        const s = p.snapshot({ what: 'needs', filter }, after, 2)
        if (page === 0) expect(s.outOfShape.map((o) => JSON.parse(o).key)).toEqual(['n1.odd'])
        else expect(s.outOfShape).toEqual([])
        keys.push(...s.entries.map((e) => JSON.parse(e).key as string))
        expect(s.total).toBe(parse(p.ask({ what: 'needs', filter }).json).total)
        if (s.next === undefined) break
        after = s.next
      }
      expect(keys).toEqual(parse(p.ask({ what: 'needs', filter }).json).entries.map((e) => e['key']))
    }
  })
})

describe('a request made again', () => {
  test('answers what ask and tag answer, and moves with the bucket, its staleness and its generation', () => {
    const c = new Contents('needs', CREATED)
    put(c, keyOf('needs', { node: 'n1', module: 'gitea', kind: 'secret', name: 'a' }), '{"v":1}')
    c.buildIndexes()
    const view = { read: () => contents, stale: false }
    let contents = c
    const p = createProvisioning({ byWhat: { needs: view } } as unknown as AnsweredViews)
    const request = { what: 'needs' as const, filter: { node: ['n1'] } }
    const q = p.keep(request, { maxBytes: 4096 })
    const same = (): void => {
      expect(q.tag()).toBe(p.tag(request))
      expect(q.answer().json).toBe(p.ask(request, { maxBytes: 4096 }).json)
    }
    same()
    const first = q.answer()
    expect(q.answer()).toBe(first)
    put(c, keyOf('needs', { node: 'n1', module: 'gitea', kind: 'secret', name: 'a' }), '{"v":2}')
    same()
    expect(parse(q.answer().json).entries[0]?.['value']).toEqual({ v: 2 })
    view.stale = true
    same()
    expect(parse(q.answer().json).stale).toBe(true)
    // A re-created bucket at the same revision number: another generation, another answer.
    contents = new Contents('needs', '2026-11-30T10:00:00Z')
    contents.apply({ key: keyOf('needs', { node: 'n1', module: 'mail', kind: 'port', name: 'p' }), value: new TextEncoder().encode('{"v":3}'), revision: c.revision, created: new Date(), operation: 'PUT' })
    contents.buildIndexes()
    expect(contents.revision).toBe(c.revision)
    same()
    expect(parse(q.answer().json).entries.map((e) => e['key'])).toEqual(['n1.mail.port.p'])
  })
})

describe('several values per filter field (docs/verb.md)', () => {
  const NODES = ['a', 'b', 'c']
  const MODULES = ['m', 'n']
  const KINDS = ['k', 'l']
  const keyArb = fc.oneof(
    fc.tuple(fc.constantFrom(...NODES), fc.constantFrom(...MODULES), fc.constantFrom(...KINDS), fc.constantFrom('x', 'y')).map((t) => t.join('.')),
    fc.constantFrom('a.m', 'b', 'c.n.k', 'z.m.k.x.y', 'a b.m.k.x')
  )
  const valuesArb = (values: string[]) => fc.option(fc.subarray(values, { minLength: 1 }), { nil: undefined })
  const filterArb = fc.record({ node: valuesArb(NODES), module: valuesArb(MODULES), kind: valuesArb(KINDS), name: valuesArb(['x', 'y']) }).map((f) =>
    Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as Filter)

  test('keep what any value keeps, in key order, paged and counted as a one-value filter is; the revision and tag are the union\'s', () => {
    fc.assert(fc.property(fc.array(fc.tuple(keyArb, fc.boolean()), { minLength: 1, maxLength: 40 }), fc.array(fc.tuple(keyArb, fc.boolean()), { maxLength: 10 }), filterArb, fc.integer({ min: 1, max: 4 }), (load, later, filter, limit) => {
      const c = new Contents('needs', CREATED)
      const model = new Map<string, number>()
      /** Each key's last change, put or deletion. */
      const last = new Map<string, number>()
      const play = (ops: Array<[string, boolean]>): void => {
        for (const [key, del] of ops) {
          put(c, key, del ? '' : '{}', del ? 'DEL' : 'PUT')
          model.set(key, revision)
          last.set(key, revision)
          if (del) model.delete(key)
        }
      }
      play(load)
      c.buildIndexes()
      play(later)
      const p = provisioningOver('needs', c)
      const order = ['node', 'module', 'kind', 'name']
      const fits = (key: string): boolean => /^[a-z]\.[a-z]\.[a-z]\.[a-z]$/.test(key)
      const kept = (key: string): boolean => Object.entries(filter).every(([f, values]) => {
        const token = key.split('.')[order.indexOf(f)]
        return fits(key) ? values.includes(token as string) : token === undefined || values.includes(token)
      })
      const entries = [...model.keys()].filter((k) => fits(k) && kept(k)).sort()
      const odd = [...model.keys()].filter((k) => !fits(k) && kept(k)).sort()
      const first = parse(p.ask({ what: 'needs', filter }).json)
      expect(first.entries.map((e) => e['key'])).toEqual(entries)
      expect(first.outOfShape.map((o) => o['key'])).toEqual(odd)
      expect(first.total).toBe(entries.length)
      // The answer's revision is the last change of a key the filter keeps, present or deleted: no other write moves it.
      const lastKept = (also: (key: string) => boolean = () => true): number => Math.max(0, ...[...last].filter(([key]) => kept(key) && also(key)).map(([, rev]) => rev))
      expect(first.revision).toBe(lastKept())
      // Each value of a facet counts the entries the filter keeps holding it, at the last change of a key the filter keeps holding it.
      for (const by of ['node', 'module', 'kind']) {
        const at = order.indexOf(by)
        const values = [...new Set(entries.map((k) => k.split('.')[at] as string))].sort()
        const facets = JSON.parse(p.ask({ what: 'needs', filter, by }).json) as { revision: number, values: unknown[] }
        expect(facets.revision).toBe(first.revision)
        expect(facets.values).toEqual(values.map((value) => ({
          value,
          count: entries.filter((k) => k.split('.')[at] === value).length,
          revision: lastKept((k) => fits(k) && k.split('.')[at] === value)
        })))
      }
      const pages: unknown[] = []
      let after: string | undefined
      for (let i = 0; i <= entries.length; i++) {
        const a = parse(p.ask({ what: 'needs', filter, limit, ...(after === undefined ? {} : { after }) }).json)
        pages.push(...a.entries.map((e) => e['key']))
        expect(a.total).toBe(entries.length)
        if (a.next === undefined) break
        after = a.next
      }
      expect(pages).toEqual(entries)
      const snapshot = p.snapshot({ what: 'needs', filter }, undefined, 1000)
      expect([snapshot.entries.length, snapshot.total, snapshot.cursor]).toEqual([entries.length, entries.length, first.cursor])
      // A write the filter does not keep moves neither the revision nor the tag; one it keeps moves
      // both, for a request asked again (which keeps what its revision was read under) as for a new one.
      // Under one tag, one body: built again with no cache, the answer and its facets are the same bytes.
      const before = p.tag({ what: 'needs', filter })
      const bodies = (over: Provisioning): string[] => [undefined, 'node', 'module', 'kind'].map((by) => over.ask({ what: 'needs', filter, ...(by === undefined ? {} : { by }) }).json)
      const built = bodies(p)
      const q = p.keep({ what: 'needs', filter })
      expect(q.tag()).toBe(before)
      for (const key of ['q.q.q.q', 'a.q.k.x', 'b.m.q.y', 'c.n.l.q', 'a.m.k.q', 'q.m.k.x', 'q.odd', 'a.n.l.y', 'c.m.k.x', 'b.n.k.y']) {
        put(c, key, '{}')
        put(c, key, '', 'DEL')
        if (kept(key)) {
          expect([q.tag(), q.tag() === before]).toEqual([p.tag({ what: 'needs', filter }), false])
          break
        }
        expect([q.tag(), p.tag({ what: 'needs', filter })]).toEqual([before, before])
        expect(bodies(provisioningOver('needs', c))).toEqual(built)
      }
    }), { numRuns: 300 })
  })

  test('the union of the values\' sets, in key order', () => {
    const c = new Contents('needs', CREATED)
    for (const key of ['a.m.k.x', 'b.m.k.x', 'a.n.l.y', 'a.odd']) put(c, key, '{}')
    c.buildIndexes()
    const p = provisioningOver('needs', c)
    const both = p.ask({ what: 'needs', filter: { node: ['a', 'b'] } }).json
    expect(parse(both).entries.map((e) => e['key'])).toEqual(['a.m.k.x', 'a.n.l.y', 'b.m.k.x'])
    expect(parse(both).outOfShape.map((o) => o['key'])).toEqual(['a.odd'])
    // Every in-shape key of node a has module m or n; its out-of-shape key's module token is neither.
    const a = parse(p.ask({ what: 'needs', filter: { node: ['a'], module: ['m', 'n'] } }).json)
    expect([a.entries, a.outOfShape]).toEqual([parse(p.ask({ what: 'needs', filter: { node: ['a'] } }).json).entries, []])
  })
})

describe('what requests keep', () => {
  test('a request keeps no answer of its own: the answer cache alone holds answers, and lets them go', () => {
    const c = new Contents('applied', CREATED)
    for (let i = 0; i < 50; i++) put(c, `n${i}.m`, `{"v":"${'x'.repeat(100)}"}`)
    c.buildIndexes()
    const p = provisioningOver('applied', c)
    const q = p.keep({ what: 'applied', filter: {} })
    q.answer()
    const first = q.answer()
    expect(q.answer()).toBe(first)
    // More distinct requests than the answer cache keeps, each asked twice (so kept), push the first answer out.
    for (let limit = 1; limit <= 1100; limit++) for (let i = 0; i < 2; i++) p.ask({ what: 'applied', filter: {}, limit })
    const again = q.answer()
    expect(again).not.toBe(first)
    expect(again.json).toBe(first.json)
  })
})

describe('held requests', () => {
  /** A view whose signals the test sends. */
  function followed (c: Contents) {
    const listeners = new Set<(s: 'change' | 'state') => void>()
    const view = { read: () => c, stale: false, listen: (l: (s: 'change' | 'state') => void) => { listeners.add(l); return () => { listeners.delete(l) } } }
    const signal = (s: 'change' | 'state'): void => { for (const l of [...listeners]) l(s) }
    return { p: createProvisioning({ byWhat: { needs: view } } as unknown as AnsweredViews), signal, listeners }
  }
  const burst = async (): Promise<void> => await new Promise((resolve) => setImmediate(resolve))

  test('a write elsewhere looks at no held request: one read of the changes a burst, whatever is held', async () => {
    const c = new Contents('needs', CREATED)
    put(c, 'bob.m.secret.a', '{}')
    c.buildIndexes()
    const { p, signal, listeners } = followed(c)
    const cursor = { revision: c.revision, generation: c.generation }
    const gone = new AbortController()
    const woken: string[] = []
    const held = Array.from({ length: 300 }, async (_, i) => {
      await p.changed([{ what: 'needs', filter: { node: [`n${i}`] }, since: cursor }], 60_000, gone.signal)
      woken.push(`n${i}`)
    })
    const read = vi.spyOn(c, 'changesSince')
    const looked = vi.spyOn(c.entries, 'get')
    for (let i = 0; i < 20; i++) {
      put(c, `bob.m.secret.w${i}`, '{}')
      signal('change')
      await burst()
    }
    expect(woken).toEqual([])
    // The log is read once a burst for all of them, and no change is looked up for any of them.
    expect(read.mock.calls.length).toBeLessThanOrEqual(20)
    expect(looked).not.toHaveBeenCalled()
    // A change one of them shows wakes that one alone.
    put(c, 'n7.m.secret.x', '{}')
    signal('change')
    await vi.waitFor(() => { expect(woken).toEqual(['n7']) })
    gone.abort()
    await Promise.all(held)
    expect(listeners.size).toBe(0)
  })

  test('without since, a change after now wakes it; a state change wakes every one', async () => {
    const c = new Contents('needs', CREATED)
    put(c, 'ace.m.secret.a', '{}')
    c.buildIndexes()
    const { p, signal } = followed(c)
    let woken = 0
    const ace = p.changed([{ what: 'needs', filter: { node: ['ace'] } }], 60_000).then(() => woken++)
    const all = p.changed([{ what: 'needs', filter: { node: ['zed'] } }], 60_000).then(() => woken++)
    put(c, 'ace.m.secret.b', '{}')
    signal('change')
    await ace
    expect(woken).toBe(1)
    signal('state')
    await all
    expect(woken).toBe(2)
  })

  test('a held request on a filter no index matches exactly is woken by a change it keeps, and by no other', async () => {
    const c = new Contents('needs', CREATED)
    put(c, 'ace.m.secret.a', '{}')
    put(c, 'bob.m.secret.a', '{}')
    c.buildIndexes()
    const { p, signal } = followed(c)
    const request = { what: 'needs' as const, filter: { node: ['ace'], name: ['a'] } }
    const tag = p.tag(request)
    let woken = false
    const held = p.changed([request], 60_000).then(() => { woken = true })
    for (const key of ['ace.m.secret.b', 'bob.m.secret.a', 'ace.n.port.b']) {
      put(c, key, '{}')
      signal('change')
      await burst()
    }
    expect([woken, p.tag(request)]).toEqual([false, tag])
    put(c, 'ace.n.port.a', '{}')
    signal('change')
    await held
    expect(p.tag(request)).not.toBe(tag)
  })
})

describe('an event stream\'s signal (follow)', () => {
  /** A view whose contents can be swapped (another generation) or unreadable (loading). */
  function swappable (first: Contents | undefined) {
    let contents = first
    const listeners = new Set<(s: 'change' | 'state') => void>()
    const view = {
      read: () => { if (contents === undefined) throw new Error('not read yet'); return contents },
      stale: false,
      listen: (l: (s: 'change' | 'state') => void) => { listeners.add(l); return () => { listeners.delete(l) } }
    }
    const signal = async (s: 'change' | 'state'): Promise<void> => {
      for (const l of [...listeners]) l(s)
      await new Promise((resolve) => setImmediate(resolve))
    }
    return { p: createProvisioning({ byWhat: { needs: view } } as unknown as AnsweredViews), signal, listeners, swap: (c: Contents) => { contents = c } }
  }

  test('wakes it at every change it keeps after what it sent, at none elsewhere, and at every change of state, until it stops', async () => {
    const c = new Contents('needs', CREATED)
    put(c, 'ace.m.secret.a', '{}')
    c.buildIndexes()
    const { p, signal, listeners } = swappable(c)
    const sent = (): string => formatCursor(c.revision, c.generation)
    let woken = 0
    const following = p.follow({ what: 'needs', filter: { node: ['ace'], kind: ['secret'] } }, sent(), () => { woken++ })
    // Another node's write, and one of its node that its filter leaves out.
    for (const key of ['bob.m.secret.a', 'ace.m.port.a']) {
      put(c, key, '{}')
      await signal('change')
    }
    expect(woken).toBe(0)
    put(c, 'ace.m.secret.b', '{}')
    await signal('change')
    put(c, 'ace.m.secret.c', '{}')
    await signal('change')
    // Woken again: a stream's waiter is held past its wake.
    expect(woken).toBe(2)
    // A change it already sent (read at another wake before this look) wakes nothing.
    put(c, 'ace.m.secret.d', '{}')
    following.moved(sent())
    await signal('change')
    expect(woken).toBe(2)
    await signal('state')
    expect(woken).toBe(3)
    following.stop()
    expect(listeners.size).toBe(0)
  })

  test('followed before its view can be read, or across a new generation, it is woken once by the new contents, then by its own changes alone', async () => {
    const { p, signal, swap } = swappable(undefined)
    let woken = 0
    p.follow({ what: 'needs', filter: { node: ['ace'] } }, undefined, () => { woken++ })
    for (const created of [CREATED, '2026-11-30T09:40:00.123456789Z']) {
      const c = new Contents('needs', created)
      put(c, 'bob.m.secret.a', '{}')
      c.buildIndexes()
      swap(c)
      await signal('change')
      const after = woken
      put(c, 'bob.m.secret.b', '{}')
      await signal('change')
      expect(woken).toBe(after)
      put(c, 'ace.m.secret.b', '{}')
      await signal('change')
      expect(woken).toBe(after + 1)
    }
    expect(woken).toBe(4)
  })
})
