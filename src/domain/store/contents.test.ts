// A bucket's contents fed changes as a watch delivers them (no NATS here): what is held, what is
// out of shape, and the indexes a narrowed request reads, before and after the snapshot is in.

import fc from 'fast-check'
import { describe, expect, test, vi } from 'vitest'
import { Contents, type FieldValues, type KvChange } from './contents.js'
import type { KeySet } from './sorted-keys.js'

const created = new Date(Date.UTC(2026, 10, 29, 9, 40))

function feeder (c: Contents) {
  let revision = 0
  return (key: string, value = '{}', operation: KvChange['operation'] = 'PUT'): number => {
    c.apply({ key, value: new TextEncoder().encode(value), revision: ++revision, created, operation })
    return revision
  }
}

const keysOf = (c: Contents, set: KeySet): string[] => Array.from({ length: set.size }, (_, i) => c.entries.keys.keyAt(set.slotAt(i)))
const oddKeysOf = (c: Contents): string[] => [...c.outOfShapeInOrder()].map((o) => o.key)

/** A filter of field positions, each with one value or several. */
const valuesAt = (filter: Array<[number, string | string[]]>): FieldValues => new Map(filter.map(([p, v]) => [p, typeof v === 'string' ? [v] : v]))

/** The keys of the narrowest candidate set for a filter of field positions, and whether it is exact. */
function candidates (c: Contents, filter: Array<[number, string | string[]]>): [string[], boolean] {
  const { set, exact } = c.candidates(valuesAt(filter))
  return [keysOf(c, set), exact]
}

describe('apply', () => {
  test('puts, updates, deletes and purges: held entries follow the last change of each key', () => {
    const c = new Contents('needs', 'gen-1')
    const put = feeder(c)
    put('n1.gitea.secret.a', '{"v":1}')
    put('n1.gitea.secret.b')
    put('n1.gitea.secret.a', '{"v":2}')
    put('n1.gitea.secret.b', '', 'DEL')
    put('n1.gitea.secret.c')
    const last = put('n1.gitea.secret.c', '', 'PURGE')
    expect(c.entries.keys.sorted((slot) => c.entries.holds(slot)).keys()).toEqual(['n1.gitea.secret.a'])
    expect(c.entries.get('n1.gitea.secret.a')?.json).toContain('"value":{"v":2}')
    expect(c.revision).toBe(last)
  })

  test('a change at or before the last revision applied is ignored, as a resumed watch may repeat it', () => {
    const c = new Contents('applied', 'gen-1')
    c.apply({ key: 'n1.gitea', value: new TextEncoder().encode('{"new":true}'), revision: 5, created, operation: 'PUT' })
    c.apply({ key: 'n1.gitea', value: new TextEncoder().encode('{"old":true}'), revision: 5, created, operation: 'PUT' })
    c.apply({ key: 'n1.gitea', value: new Uint8Array(), revision: 4, created, operation: 'DEL' })
    expect(c.entries.get('n1.gitea')?.json).toContain('"value":{"new":true}')
    expect(c.revision).toBe(5)
  })

  test('keys out of shape are held apart with the reason, and a delete removes them', () => {
    const c = new Contents('applied', 'gen-1')
    const put = feeder(c)
    put('n1')
    const revision = put('n1.gitea.extra')
    put('n1', '', 'DEL')
    expect(c.entries.size).toBe(0)
    expect([...c.outOfShape.keys()]).toEqual(['n1.gitea.extra'])
    expect(c.outOfShape.get('n1.gitea.extra')).toMatchObject({ revision, tokens: ['n1', 'gitea', 'extra'], reason: expect.stringMatching(/3 tokens/) })
  })

  test('a delete of a key never seen changes nothing but the revision', () => {
    const c = new Contents('applied', 'gen-1')
    const put = feeder(c)
    put('n1.gitea', '', 'DEL')
    expect([c.entries.size, c.outOfShape.size, c.revision]).toEqual([0, 0, 1])
  })
})

describe('indexes', () => {
  function loaded (): { c: Contents, put: ReturnType<typeof feeder> } {
    const c = new Contents('needs', 'gen-1')
    const put = feeder(c)
    for (const key of ['n2.mail.port.smtp', 'n1.gitea.secret.db', 'n1.mail.secret.dkim', 'n1.gitea.port.http', 'n2.gitea.secret.db']) put(key)
    put('n1.odd')
    return { c, put }
  }

  test('are absent until the snapshot is in, then hold every key sorted', () => {
    const { c } = loaded()
    expect(c.indexed).toBe(false)
    c.buildIndexes()
    expect(c.indexed).toBe(true)
    expect(keysOf(c, c.candidates(new Map()).set)).toEqual(['n1.gitea.port.http', 'n1.gitea.secret.db', 'n1.mail.secret.dkim', 'n2.gitea.secret.db', 'n2.mail.port.smtp'])
    expect(oddKeysOf(c)).toEqual(['n1.odd'])
  })

  test('a narrowed request reads the narrowest index, exact when the index is the whole filter', () => {
    const { c } = loaded()
    c.buildIndexes()
    expect(candidates(c, [])).toEqual([keysOf(c, c.candidates(new Map()).set), true])
    expect(candidates(c, [[0, 'n1']])).toEqual([['n1.gitea.port.http', 'n1.gitea.secret.db', 'n1.mail.secret.dkim'], true])
    expect(candidates(c, [[0, 'n1'], [1, 'gitea']])).toEqual([['n1.gitea.port.http', 'n1.gitea.secret.db'], true])
    expect(candidates(c, [[0, 'n1'], [2, 'secret']])).toEqual([['n1.gitea.secret.db', 'n1.mail.secret.dkim'], true])
    // No index of module with kind: the smaller single index, to be checked entry by entry.
    expect(candidates(c, [[1, 'mail'], [2, 'port']])).toEqual([['n1.mail.secret.dkim', 'n2.mail.port.smtp'], false])
    expect(candidates(c, [[0, 'n9']])).toEqual([[], true])
  })

  test('are built from each key\'s own fields where a kind starts the kind of the key before it', () => {
    const c = new Contents('needs', 'gen-1')
    const put = feeder(c)
    for (const key of ['n1.gitea.port.a', 'n1.gitea.portal.b', 'n1.gitea.port.c', 'n1.gitea.port.b']) put(key)
    c.buildIndexes()
    expect(candidates(c, [[2, 'portal']])).toEqual([['n1.gitea.portal.b'], true])
    expect(candidates(c, [[2, 'port']])).toEqual([['n1.gitea.port.a', 'n1.gitea.port.b', 'n1.gitea.port.c'], true])
    expect(candidates(c, [[0, 'n1'], [2, 'portal']])).toEqual([['n1.gitea.portal.b'], true])
    expect(c.tally?.node('n1')?.modules?.get('gitea')).toMatchObject({ count: 4, kinds: new Map([['port', 3], ['portal', 1]]) })
  })

  test('follow every change once built: a new key joins them, a removed one leaves, an emptied value goes', () => {
    const { c, put } = loaded()
    c.buildIndexes()
    put('n3.gitea.secret.db')
    put('n2.mail.port.smtp', '', 'DEL')
    put('n2.odd')
    put('n1.odd', '', 'PURGE')
    expect(keysOf(c, c.candidates(new Map()).set)).toEqual(['n1.gitea.port.http', 'n1.gitea.secret.db', 'n1.mail.secret.dkim', 'n2.gitea.secret.db', 'n3.gitea.secret.db'])
    expect(candidates(c, [[0, 'n3']])).toEqual([['n3.gitea.secret.db'], true])
    expect(candidates(c, [[1, 'gitea'], [2, 'port']])).toEqual([['n1.gitea.port.http'], false])
    expect(candidates(c, [[2, 'port'], [0, 'n2']])).toEqual([[], true])
    expect(oddKeysOf(c)).toEqual(['n2.odd'])
  })

  test('node and node with module are ranges of all keys: a node whose name starts another\'s, a value with a dot, revisions kept per value', () => {
    const c = new Contents('needs', 'gen-1')
    const put = feeder(c)
    put('n-1.a.k.x')
    put('n-10.a.k.y')
    put('n-1.a-b.k.z')
    put('n-1.a.b.k')
    c.buildIndexes()
    expect(candidates(c, [[0, 'n-1']])).toEqual([['n-1.a-b.k.z', 'n-1.a.b.k', 'n-1.a.k.x'], true])
    expect(candidates(c, [[0, 'n-1'], [1, 'a']])).toEqual([['n-1.a.b.k', 'n-1.a.k.x'], true])
    expect(candidates(c, [[0, 'n-1.a']])).toEqual([[], true])
    expect(candidates(c, [[0, 'n-1'], [1, 'a.b']])).toEqual([[], true])
    expect(c.revisionFor(valuesAt([[0, 'n-10']]))).toBe(2)
    expect(c.revisionFor(valuesAt([[0, 'n-1'], [1, 'a']]))).toBe(4)
    const gone = put('n-10.a.k.y', '', 'DEL')
    put('n-1.a-b.k.z', '{"v":2}')
    expect(candidates(c, [[0, 'n-10']])).toEqual([[], true])
    // An emptied node keeps the revision of the change that emptied it; the other node moves alone.
    expect(c.revisionFor(valuesAt([[0, 'n-10']]))).toBe(gone)
    expect(c.revisionFor(valuesAt([[0, 'n-1'], [1, 'a']]))).toBe(4)
    expect(c.revisionFor(valuesAt([[0, 'n-9']]))).toBe(0)
    const { set } = c.candidates(valuesAt([[0, 'n-1']]))
    expect([set.upperBound(''), set.upperBound('n-1.a.b.k'), set.upperBound('n-2')]).toEqual([0, 2, 3])
  })

  test('the cache of ranges keeps only prefixes some key had: distinct requests for absent nodes keep nothing', () => {
    const c = new Contents('needs', 'gen-1')
    const put = feeder(c)
    put('n1.a.k.x')
    put('n2.a.k.x')
    c.buildIndexes()
    for (let i = 0; i < 1000; i++) {
      expect(c.revisionFor(valuesAt([[0, `absent-${i}`]]))).toBe(0)
      expect(candidates(c, [[0, `absent-${i}`], [1, 'a']])).toEqual([[], true])
    }
    expect(candidates(c, [[0, 'n1']])).toEqual([['n1.a.k.x'], true])
    expect(candidates(c, [[0, 'n2'], [1, 'a']])).toEqual([['n2.a.k.x'], true])
    // Private, read here for its bound: one range per prefix value held (n1; n2 and n2.a, both looked
    // at for the last request), never one per request.
    expect((c as unknown as { ranges: Map<string, unknown> }).ranges.size).toBe(3)
  })

  test('collect: a collection is indexed by its decoded name', () => {
    const c = new Contents('collect', 'gen-1')
    const put = feeder(c)
    put('n1.shell=3Azsh=3Anormal.gitea')
    put('n1.environment.gitea')
    c.buildIndexes()
    expect(candidates(c, [[0, 'n1'], [1, 'shell:zsh:normal']])).toEqual([['n1.shell=3Azsh=3Anormal.gitea'], true])
  })
})

describe('what a filter keeps, whatever index answers it', () => {
  // Keys of every bucket with a node, and values few enough that filters and keys meet often;
  // collect's collections are encoded (`a:b` is `a=3Ab`), and some keys are out of shape. A needs
  // kind starts another's (`k`, `kl`): the index build reads the fields of a run of keys once.
  const KEYS = {
    needs: fc.oneof(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.constantFrom('m', 'n'), fc.constantFrom('k', 'kl', 'l'), fc.constantFrom('x', 'y')).map((t) => t.join('.')), fc.constantFrom('a.m', 'b', 'c.n.k.x.y')),
    applied: fc.oneof(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.constantFrom('m', 'n', 'o')).map((t) => t.join('.')), fc.constantFrom('a.m.x', 'b')),
    collect: fc.oneof(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.constantFrom('e', 's=3Az'), fc.constantFrom('m', 'n')).map((t) => t.join('.')), fc.constantFrom('a.e', 'b.s:z.m'))
  }
  const VALUES = { needs: [['a', 'b', 'c'], ['m', 'n'], ['k', 'kl', 'l'], ['x', 'y']], applied: [['a', 'b', 'c'], ['m', 'n', 'o']], collect: [['a', 'b', 'c'], ['e', 's:z'], ['m', 'n']] }
  /** The fields facets count: every one but a need's name. */
  const FACETED = { needs: [0, 1, 2], applied: [0, 1], collect: [0, 1, 2] }
  const SHAPES = { needs: /^[a-c]\.[mn]\.(k|kl|l)\.[xy]$/, applied: /^[a-c]\.[mno]$/, collect: /^[a-c]\.(e|s=3Az)\.[mn]$/ }

  test.each(['needs', 'applied', 'collect'] as const)('%s: keys fed as the bytes they arrived in are held as the same keys fed as strings, before and after the index build', (what) => {
    const ops = fc.array(fc.tuple(KEYS[what], fc.constantFrom<KvChange['operation']>('PUT', 'PUT', 'PUT', 'DEL', 'PURGE'), fc.integer({ min: 0, max: 9 })), { maxLength: 30 })
    fc.assert(fc.property(ops, ops, (load, later) => {
      const asStrings = new Contents(what, 'gen-1')
      const asBytes = new Contents(what, 'gen-1')
      let revision = 0
      const play = (changes: typeof load): void => {
        for (const [key, operation, v] of changes) {
          const change = { key, value: new TextEncoder().encode(`{"v":${v}}`), revision: ++revision, created, operation }
          asStrings.apply(change)
          asBytes.apply({ ...change, keyBytes: Buffer.from(key) })
        }
      }
      const held = (c: Contents): unknown => ({
        entries: c.entries.keys.sorted((slot) => c.entries.holds(slot)).keys().map((key) => c.entries.get(key)?.json),
        outOfShape: [...c.outOfShape.values()].map((o) => o.json).sort(),
        deletions: [...c.deletions].sort(),
        changes: [...c.changesSince(0)],
        revision: c.revision
      })
      play(load)
      expect(held(asBytes)).toEqual(held(asStrings))
      asStrings.buildIndexes()
      asBytes.buildIndexes()
      play(later)
      expect(held(asBytes)).toEqual(held(asStrings))
      expect([...asBytes.outOfShapeInOrder()]).toEqual([...asStrings.outOfShapeInOrder()])
      for (const position of FACETED[what]) expect(asBytes.valuesKept(new Map(), position)).toEqual(asStrings.valuesKept(new Map(), position))
    }), { numRuns: 500 })
  })

  test.each(['needs', 'applied', 'collect'] as const)('%s: the revision is the last change of a key it keeps, and each value of a field counts its entries at the last change of a key holding it', (what) => {
    const ops = fc.array(fc.tuple(KEYS[what], fc.constantFrom<KvChange['operation']>('PUT', 'PUT', 'DEL', 'PURGE')), { maxLength: 30 })
    const filterArb = fc.tuple(...VALUES[what].map((values) => fc.option(fc.subarray(values, { minLength: 1 }), { nil: undefined })))
    fc.assert(fc.property(ops, ops, filterArb, (load, later, chosen) => {
      const c = new Contents(what, 'gen-1')
      const put = feeder(c)
      const last = new Map<string, { revision: number, held: boolean }>()
      const play = (changes: typeof load): void => { for (const [key, op] of changes) last.set(key, { revision: put(key, '{}', op), held: op === 'PUT' }) }
      play(load)
      c.buildIndexes()
      play(later)
      const filter: FieldValues = new Map(chosen.flatMap((values, p) => values === undefined ? [] : [[p, values]]))
      const decode = (token: string): string => token.replaceAll('=3A', ':')
      const fieldsOf = (key: string): string[] => key.split('.').map(decode)
      const fits = (key: string): boolean => SHAPES[what].test(key)
      // An out-of-shape key is read by its tokens: a collection's is the encoded name.
      const kept = (key: string): boolean => [...filter].every(([p, values]) => {
        if (fits(key)) return values.includes(fieldsOf(key)[p] as string)
        const token = key.split('.')[p]
        return token === undefined || values.map((v) => v.replaceAll(':', '=3A')).includes(token)
      })
      const keptKeys = [...last].filter(([key]) => kept(key))
      expect(c.revisionFor(filter)).toBe(Math.max(0, ...keptKeys.map(([, l]) => l.revision)))
      // The changes after a cursor, read from the index's set or from the log, whichever is cheaper.
      for (const from of [0, load.length, c.revision - 2]) {
        const changed = keptKeys.filter(([, l]) => l.revision > from).map(([key, l]) => [key, l.revision]).sort(([, a], [, b]) => (a as number) - (b as number))
        expect([...c.changesSinceOf(filter, from)].filter(([key]) => kept(key)), `after ${from}`).toEqual(changed)
      }
      FACETED[what].forEach((position) => {
        const expected = new Map<string, { count: number, revision: number }>()
        for (const [key, l] of keptKeys) {
          if (!fits(key) || !l.held) continue
          const value = fieldsOf(key)[position] as string
          expected.set(value, { count: (expected.get(value)?.count ?? 0) + 1, revision: 0 })
        }
        for (const [key, l] of keptKeys) {
          const held = fits(key) ? expected.get(fieldsOf(key)[position] as string) : undefined
          if (held !== undefined) held.revision = Math.max(held.revision, l.revision)
        }
        const values = c.valuesKept(filter, position)
        expect(new Map([...values].sort(([a], [b]) => a < b ? -1 : 1))).toEqual(new Map([...expected].sort(([a], [b]) => a < b ? -1 : 1)))
      })
    }), { numRuns: 1000 })
  })
})

describe('facets narrowed to nodes', () => {
  test.each([['needs', 'a.m{i}.k{j}.x{n}', [1, 2]], ['collect', 'a.c{i}.m{j}{n}', [1, 2]]] as const)('%s: read from the nodes\' values, not from their entries', (what, shape, positions) => {
    const c = new Contents(what, 'gen-1')
    const put = feeder(c)
    for (let n = 0; n < 1000; n++) for (const node of ['a', 'b']) put(shape.replace('a', node).replace('{i}', String(n % 5)).replace('{j}', String(n % 3)).replace('{n}', String(n)))
    c.buildIndexes()
    const read = vi.spyOn(c.entries.keys, 'keyAt')
    const counted = positions.map((p) => c.valuesKept(valuesAt([[0, 'a']]), p))
    const both = c.valuesKept(valuesAt([[0, ['a', 'b']]]), 1)
    expect(read).not.toHaveBeenCalled()
    read.mockRestore()
    expect(counted.map((values) => [...values.values()].reduce((n, v) => n + v.count, 0))).toEqual([1000, 1000])
    expect(counted.map((values) => values.size)).toEqual([5, what === 'needs' ? 3 : 1000])
    expect([...both.values()].reduce((n, v) => n + v.count, 0)).toBe(2000)
  })
})

describe('changesSinceOf', () => {
  test('reads a narrow filter\'s changes after an old cursor from its set and deletions, not from every change since', () => {
    const c = new Contents('needs', 'gen-1')
    const put = feeder(c)
    for (let n = 0; n < 1000; n++) put(`n${n % 100}.m${n % 3}.k.x${n}`)
    c.buildIndexes()
    put('n1.m1.k.y')
    put('n1.m1.k.x1', '', 'DEL')
    put('n7.m1.k.x7')
    const log = vi.spyOn(c, 'changesSince')
    expect([...c.changesSinceOf(valuesAt([[0, 'n1'], [1, 'm1']]), 5)]).toEqual([['n1.m1.k.x301', 302], ['n1.m1.k.x601', 602], ['n1.m1.k.x901', 902], ['n1.m1.k.y', 1001], ['n1.m1.k.x1', 1002]])
    expect(log).not.toHaveBeenCalled()
    // Near the end of the log, the log is the cheaper read.
    expect([...c.changesSinceOf(valuesAt([[0, 'n1'], [1, 'm1']]), 1001)]).toEqual([['n1.m1.k.x1', 1002], ['n7.m1.k.x7', 1003]])
    expect(log).toHaveBeenCalledOnce()
  })
})

describe('changesSince', () => {
  test('gives each key changed after a revision once, at its latest change, through deletions, puts again and keys out of shape', () => {
    fc.assert(fc.property(fc.array(fc.tuple(fc.constantFrom('n1.a', 'n1.b', 'n2.a', 'odd', 'n1.b.c'), fc.constantFrom<KvChange['operation']>('PUT', 'PUT', 'DEL')), { maxLength: 40 }), fc.nat(40), fc.boolean(), (ops, from, indexedFirst) => {
      const c = new Contents('applied', 'gen-1')
      if (indexedFirst) c.buildIndexes()
      const put = feeder(c)
      const latest = new Map<string, number>()
      for (const [key, operation] of ops) latest.set(key, put(key, '{}', operation))
      const expected = [...latest].filter(([, rev]) => rev > from).sort(([, a], [, b]) => a - b)
      expect([...c.changesSince(from)]).toEqual(expected)
    }))
  })
})

test('state names what the contents hold: the same object until a change is applied or more cursors are refused, and other contents have their own', () => {
  const c = new Contents('needs', 'g1')
  const put = feeder(c)
  put('ace.gitea.secret.a')
  const first = c.state
  expect(c.state).toBe(first)
  // A revision already seen changes nothing.
  c.apply({ key: 'ace.gitea.secret.a', value: new TextEncoder().encode('{}'), revision: 1, created, operation: 'PUT' })
  expect(c.state).toBe(first)
  put('ace.gitea.secret.b')
  const second = c.state
  expect(second).not.toBe(first)
  c.expireBefore(2, 'was read again')
  const third = c.state
  expect(third).not.toBe(second)
  // No more cursors refused: the same state.
  c.expireBefore(1, 'was read again')
  expect(c.state).toBe(third)
  // Contents read again to the same revision are other contents.
  const again = new Contents('needs', 'g1')
  feeder(again)('ace.gitea.secret.a')
  expect(again.state).not.toBe(first)
})
