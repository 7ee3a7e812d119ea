import { expect, test, vi } from 'vitest'
import { Contents } from '../store/contents.js'
import { keepsKey, narrowing, readKey, Selection } from './selection.js'

test('a key read once (what a held request or a stream asks of each change) is kept as changeOf keeps it, for every kind of change', () => {
  const c = new Contents('needs', '2026-11-29T09:40:00.123456789Z')
  let revision = 0
  const apply = (key: string, operation: 'PUT' | 'DEL' = 'PUT'): void => {
    c.apply({ key, value: new TextEncoder().encode('{}'), revision: ++revision, operation, created: new Date(0), nanos: 0 })
  }
  for (const key of ['n1.m.port.a', 'n2.m.port.a', 'n1.odd', 'n2.odd', 'n1.m.port.b', 'n2.m.port.b']) apply(key)
  apply('n1.m.port.b', 'DEL')
  apply('n2.m.port.b', 'DEL')
  c.buildIndexes()
  const n = narrowing('needs', { node: ['n1'] })
  const selection = new Selection(c, n)
  const keys = ['n1.m.port.a', 'n2.m.port.a', 'n1.odd', 'n2.odd', 'n1.m.port.b', 'n2.m.port.b', 'n3.never.seen.x']
  expect(keys.map((k) => keepsKey(n, readKey('needs', k)))).toEqual([true, false, true, false, true, false, false])
  expect(keys.map((k) => selection.changeOf(k, 1)?.type)).toEqual(['put', undefined, 'outOfShape', undefined, 'delete', undefined, undefined])
})

test('changesAfter gives a filter\'s puts, deletions and out-of-shape keys after a cursor, and reads nothing after the filter\'s own last revision', () => {
  const c = new Contents('needs', '2026-11-29T09:40:00.123456789Z')
  let revision = 0
  const apply = (key: string, operation: 'PUT' | 'DEL' = 'PUT'): void => {
    c.apply({ key, value: new TextEncoder().encode('{}'), revision: ++revision, operation, created: new Date(0), nanos: 0 })
  }
  for (const key of ['n1.m.port.a', 'n1.m.port.b', 'n2.m.port.a']) apply(key)
  c.buildIndexes()
  apply('n1.m.port.a')
  apply('n1.m.port.b', 'DEL')
  apply('n1.odd')
  const own = revision
  // The rest of the bucket moves on: a narrow filter's cursor falls far behind the bucket's revision.
  for (let i = 0; i < 50; i++) apply(`n2.m.port.x${i}`)
  const selection = new Selection(c, narrowing('needs', { node: ['n1'] }))
  expect([...selection.changesAfter(3)].map((ch) => [ch.type, ch.revision])).toEqual([['put', 4], ['delete', 5], ['outOfShape', 6]])
  expect([...selection.changesAfter(5)].map((ch) => ch.type)).toEqual(['outOfShape'])

  const read = vi.spyOn(c, 'changesSince')
  const walked = vi.spyOn(c.entries, 'revisionAt')
  expect([...selection.changesAfter(own)]).toEqual([])
  // Neither the log nor the filter's own set is read: its bound says nothing came after.
  expect(read).not.toHaveBeenCalled()
  expect(walked).not.toHaveBeenCalled()
  expect([...selection.changesAfter(own - 1)]).toHaveLength(1)
  expect(read).toHaveBeenCalledTimes(1)
})

test('changesAfter on a filter no index matches exactly still gives its changes when others of its narrowest set came after', () => {
  const c = new Contents('needs', '2026-11-29T09:40:00.123456789Z')
  let revision = 0
  const apply = (key: string): void => {
    c.apply({ key, value: new TextEncoder().encode('{}'), revision: ++revision, operation: 'PUT', created: new Date(0), nanos: 0 })
  }
  for (const key of ['n1.m.port.a', 'n2.m.dir.a']) apply(key)
  c.buildIndexes()
  apply('n2.m.port.b')
  const kept = revision
  // Module m and kind dir: in the module's set (and the kind's) but not the filter's.
  for (let i = 0; i < 5; i++) apply(`n3.m.dir.x${i}`)
  const selection = new Selection(c, narrowing('needs', { module: ['m'], kind: ['port'] }))
  expect([...selection.changesAfter(kept - 1)].map((ch) => [ch.type, ch.revision])).toEqual([['put', kept]])
  expect([...selection.changesAfter(kept)]).toEqual([])
})
