import fc from 'fast-check'
import { expect, test } from 'vitest'
import { ByteWriter } from './byte-writer.js'

const written = (write: (w: ByteWriter) => void): string => {
  const w = new ByteWriter()
  write(w)
  return w.text()
}

test('isoTime writes what toISOString does, for any instant, one after the other in one writer', () => {
  const instants = fc.oneof(
    fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }),
    // Around now, where entries' times are, in runs that share a day.
    fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2040, 0, 1) }),
    fc.constantFrom(0, -1, Date.UTC(2000, 1, 29), Date.UTC(1900, 2, 1) - 1, Date.UTC(2024, 11, 31, 23, 59, 59, 999), -62_167_219_200_000, 253_402_300_799_999)
  )
  fc.assert(fc.property(fc.array(instants, { minLength: 1, maxLength: 20 }), (ms) => {
    expect(written((w) => { for (const t of ms) w.isoTime(t) })).toBe(ms.map((t) => new Date(t).toISOString()).join(''))
  }))
})

test('isoTime says years past four digits as toISOString does', () => {
  for (const t of [253_402_300_800_000, -62_167_219_200_001, 8.64e15]) expect(written((w) => w.isoTime(t))).toBe(new Date(t).toISOString())
})

test('decimal writes a whole number as String does', () => {
  fc.assert(fc.property(fc.oneof(fc.nat(), fc.maxSafeNat(), fc.constantFrom(0, 9, 10, 99, 100, 2 ** 31, 2 ** 32, Number.MAX_SAFE_INTEGER)), (n) => {
    expect(written((w) => w.decimal(n))).toBe(String(n))
  }))
})
