import { expect, test } from 'vitest'
import { backoff } from './backoff.js'

test.each([
  [1000, 30_000, 0, 1000],
  [1000, 30_000, 1, 1000],
  [1000, 30_000, 2, 2000],
  [1000, 30_000, 5, 16_000],
  [1000, 30_000, 6, 30_000],
  [1000, 30_000, 1000, 30_000],
  [5000, 3000, 1, 3000]
])('first %d ms, at most %d: after %d failures, %d ms', (first, max, failures, expected) => {
  expect(backoff(first, max, failures)).toBe(expected)
})
