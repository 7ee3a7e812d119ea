import fc from 'fast-check'
import { expect, test } from 'vitest'
import { Entries } from './entry.js'
import { ByteWriter } from './byte-writer.js'
import { keyOf } from '../wire/key-shapes.js'

const utf8 = new TextEncoder()
const updated = Date.UTC(2026, 10, 29, 9, 40)

function put (entries: Entries, key: string, revision: number, value: Uint8Array, at = updated): void {
  const slot = entries.slotOf(key)
  if (slot !== undefined && entries.holds(slot)) entries.update(slot, revision, value, at)
  else entries.add(key, slot, revision, value, at)
}

const held = (entries: Entries): string[] => entries.keys.sorted((slot) => entries.holds(slot)).keys()

/** Deletes a key when it is held; whether it was. */
function remove (entries: Entries, key: string): boolean {
  const slot = entries.slotOf(key)
  if (slot === undefined || !entries.holds(slot)) return false
  entries.delete(slot)
  return true
}

test('entries answer the last value, revision and time put under each key, through deletions and compaction', () => {
  const op = fc.record({ key: fc.constantFrom('n1.a', 'n1.b', 'n2.a', 'n2.b'), value: fc.option(fc.json({ maxDepth: 2 }), { nil: undefined }) })
  fc.assert(fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
    const entries = new Entries('applied')
    const model = new Map<string, { value: string, revision: number }>()
    ops.forEach(({ key, value }, i) => {
      if (value === undefined) {
        expect(remove(entries, key)).toBe(model.delete(key))
        return
      }
      // Answered on the way: a kept JSON must follow the next put.
      entries.get(key)?.json // eslint-disable-line @typescript-eslint/no-unused-expressions
      put(entries, key, i + 1, utf8.encode(value), updated + i)
      model.set(key, { value, revision: i + 1 })
    })
    expect(held(entries)).toEqual([...model.keys()].sort())
    for (const [key, { value, revision }] of model) {
      const e = entries.get(key)
      expect(JSON.parse(e?.json as string)).toMatchObject({ key, value: JSON.parse(value), revision, updated: new Date(updated + revision - 1).toISOString() })
      expect(e?.bytes).toBe(Buffer.byteLength(e?.json as string))
      expect(entries.revision(key)).toBe(revision)
    }
  }))
})

test('values kept as bytes: compaction keeps every live value whole while updates leave old bytes behind', () => {
  const entries = new Entries('registry')
  const value = (k: number): string => JSON.stringify({ k, pad: 'x'.repeat(k % 50) })
  for (let k = 0; k < 100; k++) put(entries, `k${k}`, k + 1, utf8.encode(value(k)))
  // One busy key writes many times the buffer's size: the values put once must outlive its compactions.
  for (let i = 0; i < 20_000; i++) put(entries, 'busy', 101 + i, utf8.encode(JSON.stringify({ i, pad: 'y'.repeat(i % 50) })))
  for (let k = 0; k < 100; k++) expect(JSON.parse(entries.get(`k${k}`)?.json as string)).toMatchObject({ value: JSON.parse(value(k)), revision: k + 1 })
  expect(JSON.parse(entries.get('busy')?.json as string)).toMatchObject({ value: { i: 19_999 } })
})

test('a value that is not JSON or not UTF-8 is answered raw with the problem, every time it is asked', () => {
  const entries = new Entries('registry')
  put(entries, 'text', 1, utf8.encode('not json'))
  put(entries, 'bin', 2, new Uint8Array([0xff]))
  put(entries, 'empty', 3, new Uint8Array())
  for (let i = 0; i < 2; i++) {
    expect(JSON.parse(entries.get('text')?.json as string)).toMatchObject({ raw: 'not json', problem: expect.stringMatching(/not JSON/) })
    expect(JSON.parse(entries.get('bin')?.json as string)).toMatchObject({ rawBase64: '/w==', problem: expect.stringMatching(/not UTF-8/) })
    expect(JSON.parse(entries.get('empty')?.json as string)).toMatchObject({ raw: '', problem: expect.stringMatching(/empty/) })
  }
})

test('entries past a page of the columns and a slab of values, and a value longer than a slab, read back whole', () => {
  const entries = new Entries('registry')
  const value = (k: number): string => JSON.stringify({ k, pad: 'z'.repeat(k === 7 ? 300_000 : k % 90) })
  for (let k = 0; k < 20_000; k++) put(entries, `k${k}`, k + 1, utf8.encode(value(k)), updated + k)
  for (let k = 0; k < 20_000; k++) {
    expect(entries.get(`k${k}`)?.json).toBe(`{"key":"k${k}","kind":"k${k}","value":${value(k)},"revision":${k + 1},"updated":"${new Date(updated + k).toISOString()}"}`)
  }
})

test('a deleted key keeps its slot and its key, is no longer held, and takes its slot again when put', () => {
  const entries = new Entries('registry')
  put(entries, 'a', 1, utf8.encode('1'))
  put(entries, 'b', 2, utf8.encode('2'))
  const slot = entries.slotOf('a') as number
  expect(remove(entries, 'a')).toBe(true)
  expect(remove(entries, 'a')).toBe(false)
  expect([entries.size, entries.has('a'), entries.get('a'), entries.revision('a'), held(entries)]).toEqual([1, false, undefined, undefined, ['b']])
  expect([entries.slotOf('a'), entries.keys.keyAt(slot)]).toEqual([slot, 'a'])
  expect(entries.holds(slot)).toBe(false)
  put(entries, 'a', 4, utf8.encode('4'))
  expect([entries.slotOf('a'), entries.size, entries.revision('a'), JSON.parse(entries.get('a')?.json as string).value]).toEqual([slot, 2, 4, 4])
})

test('an entry written as bytes is its JSON: the value as it arrived less the whitespace around it, decoded fields escaped', () => {
  const space = fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r'), maxLength: 3 })
  const collection = fc.string({ minLength: 1, maxLength: 12 })
  fc.assert(fc.property(fc.json({ maxDepth: 2 }), space, space, collection, (value, before, after, name) => {
    const entries = new Entries('collect')
    const key = keyOf('collect', { node: 'n1', collection: name, contributor: 'gitea' })
    put(entries, key, 7, utf8.encode(before + value + after))
    const expected = `{"key":"${key}","node":"n1","collection":${JSON.stringify(name)},"contributor":"gitea","value":${value},"revision":7,"updated":"${new Date(updated).toISOString()}"}`
    // Asked twice: first read whole (the value not yet known to be JSON), then copied as bytes.
    expect(entries.get(key)?.json).toBe(expected)
    const w = new ByteWriter()
    w.latin1('[')
    entries.get(key)?.writeTo(w)
    expect(w.text(1)).toBe(expected)
    expect(w.view(1).equals(Buffer.from(expected))).toBe(true)
  }))
})

test('an entry gives back the revision, ms and ns within the ms it was written with, in 32-bit pages or not', () => {
  fc.assert(fc.property(
    fc.integer({ min: 1, max: 2 ** 53 - 1 }),
    // From before 1970 to past 2106, where whole seconds no longer fit in 32 bits.
    fc.integer({ min: -(2 ** 40), max: 2 ** 43 }),
    fc.integer({ min: 0, max: 999_999 }),
    (revision, ms, nanos) => {
      const entries = new Entries('needs')
      const slot = entries.add('n1.m1.secret.a', undefined, revision, utf8.encode('1'), ms, nanos)
      entries.add('n1.m1.secret.b', undefined, 7, utf8.encode('2'), updated, 5)
      expect([entries.revisionAt(slot), entries.updatedAt(slot), entries.nanosAt(slot)]).toEqual([revision, ms, nanos])
      expect([entries.revisionAt(slot + 1), entries.updatedAt(slot + 1), entries.nanosAt(slot + 1)]).toEqual([7, updated, 5])
    }))
})
