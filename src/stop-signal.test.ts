// A stop signal's meaning: the first begins the stop, the same request passed on by npm moments
// later is not a second one, and a later signal stops at once (test/main.test.ts holds `npm start`).

import { expect, test } from 'vitest'
import { REPEAT_MS, stopSignalMeaning } from './stop-signal.js'

test('the first stop signal begins the graceful stop', () => {
  expect(stopSignalMeaning(undefined, 5_000)).toBe('stop')
})

test('another within a moment is the same request (npm passing on a Ctrl-C the service also got)', () => {
  expect(stopSignalMeaning(5_000, 5_000)).toBe('repeat')
  expect(stopSignalMeaning(5_000, 5_000 + REPEAT_MS - 1)).toBe('repeat')
})

test('another after that moment stops at once', () => {
  expect(stopSignalMeaning(5_000, 5_000 + REPEAT_MS)).toBe('now')
})
