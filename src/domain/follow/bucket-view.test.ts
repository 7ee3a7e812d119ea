// What a bucket read again finds that the contents before it lacked (no NATS here): only a change
// at a revision the old contents reached, and held otherwise, counts as lost; a key the read again
// has not met is not yet one (written again while it read, it meets it later).

import { expect, test } from 'vitest'
import { Contents, type KvChange } from '../store/contents.js'
import { lostBy, unmetBy } from './bucket-view.js'

const created = new Date(Date.UTC(2026, 11, 1, 9, 0))

/** Contents of applied fed these changes, `[key, revision, operation]`, in order. */
function contents (changes: Array<[string, number, KvChange['operation']?]>): Contents {
  const c = new Contents('applied', 'gen-1')
  for (const [key, revision, operation = 'PUT'] of changes) c.apply({ key, revision, operation, value: new TextEncoder().encode('{}'), created })
  return c
}

const held: Array<[string, number, KvChange['operation']?]> = [['n1.a', 1], ['n1.b', 2], ['odd', 3], ['n1.c', 4], ['n1.c', 5, 'DEL']]

test.each<[string, Array<[string, number, KvChange['operation']?]>, number]>([
  ['read again: the same', held, 0],
  ['and changes after the old end', [...held, ['n1.a', 6], ['n1.b', 7, 'PURGE'], ['n1.d', 8], ['odd', 9, 'DEL']], 0],
  ['a put the old contents never got', [['n1.a', 1], ['n1.x', 2], ['n1.b', 3], ['odd', 4], ['n1.c', 5, 'DEL']], 5],
  ['an out-of-shape put the old contents never got', [...held.slice(0, 3), ['odd2', 4], ['n1.c', 5, 'DEL']], 5],
  ['a deletion the old contents never got', [['n1.a', 1], ['odd', 3], ['n1.c', 4], ['n1.b', 5, 'PURGE']], 5],
  ['an update the old contents never got', [['n1.a', 1], ['odd', 3], ['n1.c', 4, 'DEL'], ['n1.b', 5]], 5],
  ['a key the old contents held, not met (written again after the read passed it, or removed)', [['n1.a', 1], ['odd', 3], ['n1.c', 5, 'DEL']], 0]
])('%s: lost through %d', (_, again, lost) => {
  const old = contents(held)
  expect(lostBy(old, contents(again))).toBe(lost)
})

test.each<[string, Array<[string, number, KvChange['operation']?]>, string[]]>([
  ['read again: the same', held, []],
  ['keys held, deleted or written again since', [['n1.a', 6], ['n1.b', 7, 'PURGE'], ['odd', 8, 'DEL']], []],
  ['keys the read again has not met yet', [['n1.a', 1], ['n1.c', 5, 'DEL']], ['n1.b', 'odd']]
])('%s: keys not met %j', (_, again, unmet) => {
  expect(unmetBy(contents(held), contents(again))).toEqual(unmet)
})
