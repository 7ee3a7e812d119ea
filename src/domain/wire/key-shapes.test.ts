import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { FIELDS, isDecoded, keyOf, parseKey, shapeOf, shapeProblem, wellFormedBytes, WHATS } from './key-shapes.js'

describe('parseKey', () => {
  test.each([
    ['needs', 'n1.gitea.secret.db-password', { node: 'n1', module: 'gitea', kind: 'secret', name: 'db-password' }],
    ['applied', 'n1.gitea', { node: 'n1', module: 'gitea' }],
    ['collect', 'n1.shell=3Azsh=3Anormal.gitea', { node: 'n1', collection: 'shell:zsh:normal', contributor: 'gitea' }],
    ['registry', 'secret', { kind: 'secret' }],
    ['needs', 'n/1.a=b.c_d.e-f', { node: 'n/1', module: 'a=b', kind: 'c_d', name: 'e-f' }]
  ] as const)('%s key %s fits', (what, key, fields) => {
    expect(parseKey(what, key)).toEqual({ ok: true, values: FIELDS[what].map((f) => (fields as Record<string, string>)[f]) })
  })

  test.each([
    ['needs', 'n1.gitea', 'needs keys are <node>.<module>.<kind>.<name>: this one has 2 tokens'],
    ['needs', 'n1.gitea.secret.a.b', 'needs keys are <node>.<module>.<kind>.<name>: this one has 5 tokens'],
    ['applied', 'n1', 'applied keys are <node>.<module>: this one has 1 token'],
    ['applied', 'n1..x', 'applied keys are <node>.<module>: this one has 3 tokens'],
    ['applied', 'n1.', 'applied keys are <node>.<module>: <module> is empty'],
    ['applied', 'n1.modulé', 'applied keys are <node>.<module>: <module> "modulé" holds a character a token cannot (A-Z a-z 0-9 _ - / = only)'],
    ['registry', 'a.b', 'registry keys are <kind>: this one has 2 tokens'],
    ['collect', 'n1.shell=3azsh.gitea', 'collect keys are <node>.<collection>.<contributor>: <collection> "shell=3azsh" is not an encoded name: "=3a" at 5 is not an escape: = takes two upper-case hex digits (=3A, =3D)'],
    ['collect', 'n1.=FF.gitea', 'collect keys are <node>.<collection>.<contributor>: <collection> "=FF" is not an encoded name: its escapes do not spell UTF-8']
  ] as const)('%s key %s is out of shape', (what, key, reason) => {
    expect(parseKey(what, key)).toEqual({ ok: false, reason })
  })
})

test('keyOf writes the shape parseKey reads, escaping collections', () => {
  const fields = { node: 'n1', collection: 'contribution:route=proxy', contributor: 'gitea' }
  const key = keyOf('collect', fields)
  expect(key).toBe('n1.contribution=3Aroute=3Dproxy.gitea')
  expect(parseKey('collect', key)).toEqual({ ok: true, values: ['n1', 'contribution:route=proxy', 'gitea'] })
  expect(shapeOf('collect')).toBe('<node>.<collection>.<contributor>')
})

test('shapeProblem says what parseKey says of any key, without reading its fields', () => {
  const token = fc.stringMatching(/^[A-Za-z0-9_\-/=.:%~ ]{0,4}$/)
  fc.assert(fc.property(fc.constantFrom(...WHATS), fc.array(token, { minLength: 1, maxLength: 5 }), (what, tokens) => {
    const key = tokens.join('.')
    const parsed = parseKey(what, key)
    expect(shapeProblem(what, key)).toBe(parsed.ok ? undefined : parsed.reason)
  }), { numRuns: 2000 })
})

test('wellFormedBytes passes a key\'s bytes just when its bucket decodes no field and parseKey reads it', () => {
  // Every ASCII character, a dot often, and one past ASCII: bytes a token cannot hold are refused as bytes.
  const char = fc.oneof(fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)), fc.constantFrom('.', '.', 'a', '\u00e9'))
  fc.assert(fc.property(fc.constantFrom(...WHATS), fc.string({ unit: char, maxLength: 12 }), fc.array(fc.stringMatching(/^[A-Za-z0-9_\-/=]{1,3}$/), { minLength: 1, maxLength: 5 }), (what, odd, tokens) => {
    const undecoded = !(FIELDS[what] as readonly string[]).some(isDecoded)
    for (const key of [odd, tokens.join('.')]) {
      expect(wellFormedBytes(what, Buffer.from(key)), key).toBe(undecoded && parseKey(what, key).ok)
    }
  }), { numRuns: 3000 })
})
