import { describe, expect, test } from 'vitest'
import { compareGenerations, formatCursor, generationOf, lastReadOf, parseCursor, streamRevision } from './cursor.js'

describe('generationOf', () => {
  test.each([
    ['2026-11-29T09:40:00.123456789Z', '1795945200123456789'],
    ['2026-11-29T09:40:00.1Z', '1795945200100000000'],
    ['2026-11-29T09:40:00Z', '1795945200000000000'],
    ['2026-11-29T10:40:00.5+01:00', '1795945200500000000']
  ])('%s is %s ns', (created, ns) => {
    expect(generationOf(created)).toBe(ns)
  })
  test('two creations a nanosecond apart are two generations', () => {
    expect(generationOf('2026-11-29T09:40:00.000000001Z')).not.toBe(generationOf('2026-11-29T09:40:00.000000002Z'))
  })
})

describe('cursors', () => {
  test('round-trip', () => {
    expect(parseCursor(formatCursor(1234, '1795945200123456789'))).toEqual({ revision: 1234, generation: '1795945200123456789' })
  })
  test.each(['', '12', 'a-1', '1-', '-1', '1-2-3', '1.5-2', '99999999999999999-1'])('refuses %j naming since', (text) => {
    expect(() => parseCursor(text)).toThrow(expect.objectContaining({ code: 'BAD_REQUEST', field: 'since', message: expect.stringMatching(/is not a cursor; it takes the `cursor` of an earlier answer/) }))
  })
})

test.each([
  ['1795945200123456789', '1795945200123456790', -1],
  ['1795945200123456790', '1795945200123456789', 1],
  ['5', '1795945200123456789', -1],
  ['0001795945200123456789', '1795945200123456789', 0],
  ['999', '1000', -1]
])('generations are ordered by the creation time they name: %s against %s', (a, b, sign) => {
  expect(Math.sign(compareGenerations(a, b))).toBe(sign)
})

test('lastReadOf reads a cursor once while it is the last one asked, and another when asked', () => {
  const reads: string[] = []
  const revision = lastReadOf((cursor) => { reads.push(cursor); return parseCursor(cursor).revision })
  const seven = '7-1764400000000000000'
  // A thousand streams at the same id ask it in turn: one read.
  expect(Array.from({ length: 1000 }, () => revision(seven)).every((r) => r === 7)).toBe(true)
  expect([revision('9-1764400000000000000'), revision(seven)]).toEqual([9, 7])
  expect(reads).toEqual([seven, '9-1764400000000000000', seven])
})

test('streamRevision: no cursor is before every change', () => {
  expect([streamRevision(undefined), streamRevision('12-1764400000000000000')]).toEqual([0, 12])
})
