import { expect, test } from 'vitest'
import type { Contents } from '../store/contents.js'
import type { ViewSignal } from '../follow/bucket-view.js'
import { SharedKeeps, Waiters, type Waiter } from './waiters.js'

/** A view whose every look finds the changes `changes` holds then. */
function view (): { waiters: Waiters, change: (key: string, revision: number) => Promise<void> } {
  let changes: Array<[string, number]> = []
  let listener: ((signal: ViewSignal) => void) | undefined
  const contents = { what: 'needs', generation: '1', get revision () { return changes.at(-1)?.[1] ?? 0 }, changesSince: (after: number) => changes.filter(([, r]) => r > after) }
  const waiters = new Waiters({ read: () => contents as unknown as Contents, listen: (l) => { listener = l; return () => {} } })
  return {
    waiters,
    change: async (key, revision) => {
      changes = [[key, revision]]
      listener?.('change')
      await Promise.resolve()
    }
  }
}

test('a look asks the keeps a run of waiters holds once a change, and wakes each whose own cursor is before it', async () => {
  const { waiters, change } = view()
  let asked = 0
  const aceOnly: Waiter['keeps'] = (key) => { asked++; return 'values' in key && key.values[0] === 'ace' }
  const woken: string[] = []
  const waiter = (name: string, after: number, keeps = aceOnly): Waiter => ({ after, index: undefined, keeps, wake: () => { woken.push(name) } })
  const streams = ['a', 'b', 'c'].map((name) => waiter(name, 0))
  for (const w of streams) waiters.add(w)
  // One already sent revision 5: not woken by it, whatever its keeps says.
  const ahead = waiter('ahead', 5)
  waiters.add(ahead)
  let ownAsked = 0
  waiters.add(waiter('own', 0, () => { ownAsked++; return false }))
  await change('ace.gitea.secret.x', 5)
  expect(woken).toEqual(['a', 'b', 'c'])
  expect([asked, ownAsked]).toEqual([1, 1])
  // Moved past it, the streams are woken by the next change alone.
  for (const w of [...streams, ahead]) w.after = 5
  woken.length = 0
  await change('bob.gitea.secret.x', 6)
  expect(woken).toEqual([])
  expect(asked).toBe(2)
})

test('SharedKeeps gives equal requests one keeps while any holds it, and lets it go with the last', () => {
  const shared = new SharedKeeps()
  let made = 0
  const make = (): Waiter['keeps'] => { made++; return () => true }
  const first = shared.take('ace', make)
  const second = shared.take('ace', make)
  const other = shared.take('bob', make)
  expect(second.keeps).toBe(first.keeps)
  expect(other.keeps).not.toBe(first.keeps)
  expect([made, shared.size]).toEqual([2, 2])
  // A release said twice counts once: the other holder keeps it.
  first.release()
  first.release()
  expect(shared.size).toBe(2)
  second.release()
  other.release()
  expect(shared.size).toBe(0)
  expect(shared.take('ace', make).keeps).not.toBe(first.keeps)
})
