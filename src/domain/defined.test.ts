import { expect, test } from 'vitest'
import { defined } from './defined.js'

test.each([
  [{}, {}],
  [{ a: 1, b: undefined }, { a: 1 }],
  [{ a: null, b: 0, c: '', d: false }, { a: null, b: 0, c: '', d: false }]
])('defined(%j) is %j, with no key for an undefined field', (fields, expected) => {
  const out = defined(fields as Record<string, unknown>)
  expect(out).toEqual(expected)
  expect(Object.keys(out)).toEqual(Object.keys(expected))
})
