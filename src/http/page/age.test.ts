import { describe, expect, test } from 'vitest'
import { age } from './age.js'

describe('age', () => {
  const now = Date.parse('2026-11-29T12:00:00.000Z')
  test.each([
    ['2026-11-29T12:00:00.000Z', '0 s'],
    ['2026-11-29T11:59:59.500Z', '0 s'],
    ['2026-11-29T11:59:20.000Z', '40 s'],
    ['2026-11-29T11:59:00.000Z', '1 min'],
    ['2026-11-29T11:48:00.000Z', '12 min'],
    ['2026-11-29T09:00:00.000Z', '3 h'],
    ['2026-11-29T10:59:59.999Z', '1 h'],
    ['2026-11-24T11:00:00.000Z', '5 d'],
    ['2026-11-29T12:00:05.000Z', '0 s']
  ])('%s is %s ago', (since, expected) => {
    expect(age(since, now)).toBe(expected)
  })
})
