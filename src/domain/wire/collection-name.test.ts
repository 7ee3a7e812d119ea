import { describe, expect, test } from 'vitest'
import fc from 'fast-check'
import { decodeCollection, encodeCollection } from './collection-name.js'

describe('encodeCollection', () => {
  test.each([
    ['shell:zsh:normal', 'shell=3Azsh=3Anormal'],
    ['a=b', 'a=3Db'],
    ['é', '=C3=A9'],
    ['a.b', 'a=2Eb'],
    ['plain_name-1/x', 'plain_name-1/x'],
    ['two words', 'two=20words'],
    ['🦀', '=F0=9F=A6=80'],
    ['\u0000', '=00']
  ])('%j is written %s', (name, token) => {
    expect(encodeCollection(name)).toBe(token)
    expect(decodeCollection(token)).toEqual({ ok: true, name })
  })

  test('refuses a lone surrogate, which no UTF-8 spells', () => {
    expect(() => encodeCollection('a\ud800')).toThrow(RangeError)
  })
})

describe('decodeCollection refuses every spelling the encoder would not write', () => {
  test.each([
    ['shell=3', /=3/],
    ['shell=ZZ', /not an escape/],
    ['shell=3azsh', /upper-case/],
    ['=41', /written plain/],
    ['=C3', /UTF-8/],
    ['=FF=FE', /UTF-8/],
    ['a:b', /escape/]
  ])('%s', (token, reason) => {
    const decoded = decodeCollection(token)
    expect(decoded.ok).toBe(false)
    expect(decoded.ok ? '' : decoded.reason).toMatch(reason)
  })
})

test('every well-formed string round-trips and encodes to a key token', () => {
  fc.assert(fc.property(fc.string({ unit: 'grapheme', minLength: 1 }), (name) => {
    const token = encodeCollection(name)
    expect(token).toMatch(/^[A-Za-z0-9_\-/=]+$/)
    expect(decodeCollection(token)).toEqual({ ok: true, name })
  }))
})
