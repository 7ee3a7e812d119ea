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

test('the mesh\'s lines in some states follow its lines, in node order, when a change names a node and when every row is made again', () => {
  const applied = (c: Contents): Contents => {
    // n1's module gets an applied entry after its need: applied, no longer unapplied.
    c.apply({ key: 'n1.web', value, revision: c.revision + 1, operation: 'PUT', created: new Date(Date.UTC(2026, 10, 30)) })
    return c
  }
  const unapplied = statesAsked(['unapplied'])
  const keys = (rows: Rows, m: Mesh, asked = unapplied): string[] => rows.linesIn(m, asked).map((row) => `${row.key} ${row.line().state}`)
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
    expect(keys(rows, m), what).toEqual(['n0.web unapplied', 'n1.web unapplied', 'n2.web unapplied'])
    const after = change(m)
    expect(keys(rows, after), what).toEqual(['n0.web unapplied', 'n2.web unapplied'])
    expect(keys(rows, after, statesAsked(['unapplied', 'applied', 'unapplied'])), what).toEqual(['n0.web unapplied', 'n1.web applied', 'n2.web unapplied'])
  }
})

test('a list of the mesh\'s lines mended where changes named nodes: a node come between two, a node gone, a node moved', () => {
  const rows = new Rows()
  const m = mesh(3)
  const asked = statesAsked(['unapplied', 'applied'])
  const keys = (at: Mesh): string[] => rows.linesIn(at, asked).map((row) => `${row.key} ${row.line().state}`)
  expect(keys(m)).toEqual(['n0.web unapplied', 'n1.web unapplied', 'n2.web unapplied'])
  let revision = m.needs.revision
  const need = (key: string, operation: 'PUT' | 'DEL'): void => { m.needs.apply({ key, value, revision: ++revision, operation, created: new Date(Date.UTC(2026, 10, 29, 1)) }) }
  need('n10.api.port.p', 'PUT')
  need('n10.db.port.p', 'PUT')
  need('n2.web.secret.a', 'DEL')
  need('n0.api.port.p', 'PUT')
  m.applied.apply({ key: 'n1.web', value, revision: 1, operation: 'PUT', created: new Date(Date.UTC(2026, 10, 30)) })
  const now = { ...m }
  expect(keys(now)).toEqual(['n0.api unapplied', 'n0.web unapplied', 'n1.web applied', 'n10.api unapplied', 'n10.db unapplied'])
  expect(keys(now)).toEqual(rows.linesIn(now, asked).map((row) => `${row.key} ${row.line().state}`))
  expect(keys(now)).toEqual(new Rows().linesIn(now, asked).map((row) => `${row.key} ${row.line().state}`))
})

test('a list of the mesh\'s lines counts in the bound: one that would pass it is not kept', () => {
  const m = mesh(50)
  const unapplied = statesAsked(['unapplied'])
  const lines = new Rows()
  for (let i = 0; i < 50; i++) lines.moduleLines(m, `n${i}`)
  const withoutList = lines.kept.bytes
  expect(lines.linesIn(m, unapplied)).toHaveLength(50)
  const withList = lines.kept.bytes
  expect(withList).toBeGreaterThan(withoutList)
  const tight = new Rows(withList - 1)
  expect(tight.linesIn(m, unapplied)).toHaveLength(50)
  expect(tight.kept.bytes).toBeLessThanOrEqual(withList - 1)
  expect(tight.kept.bytes).toBe(withoutList)
})

test('a list made while its lines passed the bound is not kept: the lines it would hold were let go', () => {
  const m = mesh(50)
  const unapplied = statesAsked(['unapplied'])
  const all = new Rows()
  for (let i = 0; i < 50; i++) all.moduleLines(m, `n${i}`)
  // Lines of 40 nodes fit: the 41st lets them all go, and the last 10 are kept with room for a list.
  const bound = Math.floor(all.kept.bytes * 0.8)
  const alone = new Rows(bound)
  for (const node of all.nodes(m.needs, m.applied)) alone.moduleLines(m, node)
  const rows = new Rows(bound)
  expect(rows.linesIn(m, unapplied).map((row) => row.key)).toEqual(all.nodes(m.needs, m.applied).map((node) => `${node}.web`))
  expect(rows.kept.bytes).toBe(alone.kept.bytes)
})

test('a list whose stale nodes pass what a refresh reads is let go, not mended: the nodes a change named are held no longer', () => {
  const rows = new Rows()
  const m = mesh(3)
  const unapplied = statesAsked(['unapplied'])
  rows.linesIn(m, unapplied)
  const withList = rows.kept.bytes
  // Collect keys name nodes with no module lines: the list alone notes them.
  const named = (i: number): void => {
    m.collect?.apply({ key: `c${i}.web.a`, value, revision: i + 1, operation: 'PUT', created: new Date(Date.UTC(2026, 10, 29)) })
    rows.nodeRow({ ...m }, 'nobody')
  }
  for (let i = 0; i < 4096; i++) named(i)
  expect(rows.kept.bytes).toBe(withList)
  named(4096)
  expect(rows.kept.bytes).toBeLessThan(withList)
  expect(rows.linesIn({ ...m }, unapplied).map((row) => row.key)).toEqual(['n0.web', 'n1.web', 'n2.web'])
})
