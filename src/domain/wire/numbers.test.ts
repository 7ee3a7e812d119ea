import { expect, test } from 'vitest'
import { readDuration, readWhole } from './numbers.js'

test.each([
  ['500ms', 500],
  ['5s', 5000],
  ['.5s', 500],
  ['90s', 90_000],
  ['30m', 1_800_000],
  ['1h', 3_600_000],
  ['1.5h', 5_400_000],
  ['30', 30_000],
  ['1.5', 1500],
  ['.5', 500],
  ['0', 0]
])('%j is %j ms', (text, expected) => {
  expect(readDuration(text)).toBe(expected)
})

test.each([[''], ['soon'], ['5 parsecs'], ['-1'], ['-5s'], ['1e3'], [' 5s'], ['5s '], ['.'], ['5.'], ['0x10'], ['+5'], [' 5 '], ['5 '], ['5 s'], ['5sec '], ['Infinity']])('%j is no duration', (text) => {
  expect(readDuration(text)).toBeUndefined()
})

test.each([['0', 0], ['16', 16], ['0016', 16], ['10000', 10000]])('%j is the whole number %j', (text, expected) => {
  expect(readWhole(text)).toBe(expected)
})

test.each([[''], ['0x10'], [' 5 '], ['5 '], ['1e3'], ['+5'], ['-5'], ['1.5'], ['1.0'], ['.5'], ['0b1'], ['Infinity'], ['99999999999999999999']])('%j is no whole number', (text) => {
  expect(readWhole(text)).toBeUndefined()
})
