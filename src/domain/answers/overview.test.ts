import { describe, expect, test } from 'vitest'
import { isoNanos, stateOf } from './overview.js'

const at = (ms: number, nanos = 0) => ({ ms, nanos })

describe('stateOf', () => {
  test.each([
    ['needs and nothing applied', at(5), undefined, 'unapplied'],
    ['a need written after the applied entry', at(5, 1), at(5), 'pending'],
    ['a need written at the same instant as the applied entry', at(5, 7), at(5, 7), 'applied'],
    ['needs written before the applied entry', at(4, 999999), at(5), 'applied'],
    ['applied and no needs', undefined, at(5), 'orphaned'],
    ['neither', undefined, undefined, undefined]
  ] as const)('%s: %s', (_, needs, applied, state) => {
    expect(stateOf(needs, applied)).toBe(state)
  })
})

test('isoNanos keeps the nanoseconds NATS gives', () => {
  expect(isoNanos(at(Date.UTC(2026, 10, 29, 9, 40, 0, 123), 456789))).toBe('2026-11-29T09:40:00.123456789Z')
  expect(isoNanos(at(0, 1))).toBe('1970-01-01T00:00:00.000000001Z')
  expect(isoNanos(at(Date.UTC(2026, 10, 29, 9, 40, 0, 999), 999999))).toBe('2026-11-29T09:40:00.999999999Z')
  expect(isoNanos(at(Date.UTC(2026, 10, 29, 9, 40, 1, 0), 0))).toBe('2026-11-29T09:40:01.000000000Z')
})
