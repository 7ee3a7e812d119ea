// The kept rows: none for a name no key has, and never more bytes than their bound.

import { expect, test } from 'vitest'
import { Contents } from '../store/contents.js'
import { Rows, statesAsked, type Mesh } from './rows.js'

const CREATED = '2026-11-29T09:40:00.123456789Z'
const value = new TextEncoder().encode('{}')

function mesh (nodes: number): Mesh {
  const m = { needs: new Contents('needs', CREATED), applied: new Contents('applied', CREATED), collect: new Contents('collect', CREATED), stale: false }
  for (const c of [m.needs, m.applied, m.collect]) c.buildIndexes()
  for (let i = 0; i < nodes; i++) m.needs.apply({ key: `n${i}.web.secret.a`, value, revision: i + 1, operation: 'PUT', created: new Date(Date.UTC(2026, 10, 29) + i) })
  return m
}

test('keeps no row for a name no key has, however many are asked', () => {
  const rows = new Rows()
  const m = mesh(3)
  for (let i = 0; i < 10_000; i++) {
    expect(rows.nodeRow(m, `nobody-${i}`)).toBeUndefined()
    expect(rows.moduleLines(m, `nobody-${i}`)).toEqual([])
  }
  expect(rows.kept).toEqual({ nodes: 0, bytes: 0 })
  expect(rows.nodeRow(m, 'n1')?.json).toContain('"node":"n1"')
  expect(rows.kept.nodes).toBe(1)
})

test('holds no more bytes than its bound: past it the rows are made again', () => {
  const bound = 64 * 1024
  const rows = new Rows(bound)
  const m = mesh(2000)
  let most = 0
  for (let i = 0; i < 2000; i++) {
    expect(rows.nodeRow(m, `n${i}`)?.json).toContain(`"node":"n${i}"`)
    most = Math.max(most, rows.kept.bytes)
  }
  expect(most).toBeLessThanOrEqual(bound)
  expect(most).toBeGreaterThan(bound / 2)
})

test('the lines of a node in some states follow its lines, when a change names the node and when every row is made again', () => {
  const applied = (c: Contents): Contents => {
    // n1's module gets an applied entry after its need: applied, no longer unapplied.
    c.apply({ key: 'n1.web', value, revision: c.revision + 1, operation: 'PUT', created: new Date(Date.UTC(2026, 10, 30)) })
    return c
  }
  const unapplied = statesAsked(['unapplied'])
  const cases: Array<[string, (m: Mesh) => Mesh]> = [
    ['a change naming the node', (m) => ({ ...m, applied: applied(m.applied) })],
    ['the bucket read again', (m) => {
      const again = new Contents('applied', CREATED)
      again.buildIndexes()
      return { ...m, applied: applied(again) }
    }]
  ]
  for (const [what, change] of cases) {
    const rows = new Rows()
    const m = mesh(3)
    expect(rows.moduleLinesIn(m, 'n1', unapplied).map((l) => l.module), what).toEqual(['web'])
    const after = change(m)
    expect(rows.moduleLinesIn(after, 'n1', unapplied), what).toEqual([])
    expect(rows.moduleLinesIn(after, 'n1', statesAsked(['unapplied', 'applied', 'unapplied'])).map((l) => l.state), what).toEqual(['applied'])
  }
})
