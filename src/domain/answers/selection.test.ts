import { expect, test } from 'vitest'
import { Contents } from '../store/contents.js'
import { narrowing, Selection } from './selection.js'

test('keeps says of every kind of change what changeOf gives, without making its JSON', () => {
  const c = new Contents('needs', '2026-11-29T09:40:00.123456789Z')
  let revision = 0
  const apply = (key: string, operation: 'PUT' | 'DEL' = 'PUT'): void => {
    c.apply({ key, value: new TextEncoder().encode('{}'), revision: ++revision, operation, created: new Date(0), nanos: 0 })
  }
  for (const key of ['n1.m.port.a', 'n2.m.port.a', 'n1.odd', 'n2.odd', 'n1.m.port.b', 'n2.m.port.b']) apply(key)
  apply('n1.m.port.b', 'DEL')
  apply('n2.m.port.b', 'DEL')
  c.buildIndexes()
  const selection = new Selection(c, narrowing('needs', { node: ['n1'] }))
  const keys = ['n1.m.port.a', 'n2.m.port.a', 'n1.odd', 'n2.odd', 'n1.m.port.b', 'n2.m.port.b', 'n3.never.seen.x']
  expect(keys.map((k) => selection.keeps(k))).toEqual([true, false, true, false, true, false, false])
  expect(keys.map((k) => selection.changeOf(k, 1)?.type)).toEqual(['put', undefined, 'outOfShape', undefined, 'delete', undefined, undefined])
})
