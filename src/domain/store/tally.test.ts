// The tally kept as changes arrive is what counting the held entries afresh gives, whatever the
// order of puts, rewrites, deletions and out-of-shape keys, before and after the snapshot is in.

import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { Contents } from './contents.js'
import { compareInstants, type Instant, type NeedsGroup } from './tally.js'

interface Counted { count: number, latest: Instant | undefined }

/** Every held entry counted per node and per node.module, from the entries themselves. */
function recounted (c: Contents): Map<string, Counted> {
  const out = new Map<string, Counted>()
  for (let slot = 0; slot < c.entries.keys.size; slot++) {
    if (!c.entries.holds(slot)) continue
    const key = c.entries.keys.keyAt(slot)
    const at = { ms: c.entries.updatedAt(slot), nanos: c.entries.nanosAt(slot) }
    const [node, module] = key.split('.') as [string, string]
    for (const group of [node, `${node}.${module}`]) {
      const g = out.get(group) ?? { count: 0, latest: undefined }
      g.count++
      if (g.latest === undefined || compareInstants(at, g.latest) > 0) g.latest = at
      out.set(group, g)
    }
  }
  return out
}

/** Per held node.module, its needs per kind, from the entries themselves; and per kind, its modules. */
function kindsRecounted (c: Contents): { kinds: Map<string, Map<string, number>>, modulesOf: Map<string, Set<string>> } {
  const kinds = new Map<string, Map<string, number>>()
  const modulesOf = new Map<string, Set<string>>()
  for (let slot = 0; slot < c.entries.keys.size; slot++) {
    if (!c.entries.holds(slot)) continue
    const [node, module, kind] = c.entries.keys.keyAt(slot).split('.') as [string, string, string]
    const group = `${node}.${module}`
    const counted = kinds.get(group) ?? new Map<string, number>()
    counted.set(kind, (counted.get(kind) ?? 0) + 1)
    kinds.set(group, counted)
    modulesOf.set(kind, (modulesOf.get(kind) ?? new Set()).add(group))
  }
  return { kinds, modulesOf }
}

function kindsTallied (c: Contents): { kinds: Map<string, Map<string, number>>, modulesOf: Map<string, Set<string>> } {
  const kinds = new Map<string, Map<string, number>>()
  const modulesOf = new Map<string, Set<string>>()
  for (const node of [...(c.tally?.nodes() ?? [])]) {
    for (const [module, g] of c.tally?.node(node)?.modules ?? []) {
      if (g.count === 0) continue
      kinds.set(`${node}.${module}`, new Map((g as NeedsGroup).kinds))
    }
  }
  for (const counted of kinds.values()) {
    for (const kind of counted.keys()) modulesOf.set(kind, new Set([...c.tally?.modulesOfKind(kind) ?? []].map((g) => `${g.node}.${g.module}`)))
  }
  return { kinds, modulesOf }
}

function tallied (c: Contents): Map<string, Counted> {
  const out = new Map<string, Counted>()
  for (const node of [...(c.tally?.nodes() ?? [])]) {
    const t = c.tally?.node(node)
    if (t === undefined || t.entries.count === 0) continue
    out.set(node, { count: t.entries.count, latest: { ms: t.entries.ms, nanos: t.entries.nanos } })
    for (const [module, g] of t.modules ?? []) out.set(`${node}.${module}`, { count: g.count, latest: { ms: g.ms, nanos: g.nanos } })
  }
  return out
}

const change = fc.record({
  key: fc.constantFrom('a.m.secret.x', 'a.m.secret.y', 'a.m.port.z', 'a.n.port.x', 'b.m.secret.x', 'a.m', 'b.m.too.many.tokens'),
  put: fc.boolean(),
  ms: fc.integer({ min: 0, max: 3 }),
  nanos: fc.integer({ min: 0, max: 2 })
})

describe('Tally', () => {
  test('counts per node and module what the held entries hold, with their latest write to the ns, and per module its needs of each kind', () => {
    fc.assert(fc.property(fc.array(change, { maxLength: 40 }), fc.nat(40), (changes, loadedAt) => {
      const c = new Contents('needs', 'gen-1')
      changes.forEach((x, i) => {
        if (i === loadedAt) c.buildIndexes()
        c.apply({ key: x.key, revision: i + 1, operation: x.put ? 'PUT' : 'DEL', value: new Uint8Array(), created: new Date(x.ms), nanos: x.nanos })
      })
      if (!c.indexed) c.buildIndexes()
      expect(tallied(c)).toEqual(recounted(c))
      expect(kindsTallied(c)).toEqual(kindsRecounted(c))
      const odd = [...c.outOfShape.keys()].filter((k) => k.startsWith('a.')).length
      expect(c.tally?.node('a')?.outOfShape ?? 0).toBe(odd)
    }))
  })

  test('a node named only by out-of-shape keys has a tally until they go', () => {
    const c = new Contents('needs', 'gen-1')
    c.buildIndexes()
    c.apply({ key: 'bob.gitea', revision: 1, operation: 'PUT', value: new Uint8Array(), created: new Date(1) })
    expect(c.tally?.node('bob')).toMatchObject({ outOfShape: 1, entries: { count: 0 } })
    c.apply({ key: 'bob.gitea', revision: 2, operation: 'DEL', value: new Uint8Array(), created: new Date(2) })
    expect(c.tally?.node('bob')).toBeUndefined()
  })

  test('an out-of-shape key whose first token is no token counts for no node', () => {
    const c = new Contents('collect', 'gen-1')
    c.buildIndexes()
    c.apply({ key: 'b@d.shell.gitea', revision: 1, operation: 'PUT', value: new Uint8Array(), created: new Date(1) })
    c.apply({ key: 'ok.shell=3azsh.gitea', revision: 2, operation: 'PUT', value: new Uint8Array(), created: new Date(2) })
    expect([...c.tally?.nodes() ?? []]).toEqual(['ok'])
  })
})
