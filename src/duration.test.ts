import { expect, test } from 'vitest'
import { readDuration } from './duration.js'

test.each([
  ['500ms', 500],
  ['5s', 5000],
  ['90s', 90_000],
  ['30m', 1_800_000],
  ['1h', 3_600_000],
  ['1.5h', 5_400_000],
  ['30', 30_000],
  ['1.5', 1500],
  ['0', 0]
])('%j is %j ms', (text, expected) => {
  expect(readDuration(text)).toBe(expected)
})

test.each([[''], ['soon'], ['5 parsecs'], ['-1'], ['-5s'], ['1e3'], [' 5s'], ['5s '], ['.']])('%j is no duration', (text) => {
  expect(readDuration(text)).toBeUndefined()
})
