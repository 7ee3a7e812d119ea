import fc from 'fast-check'
import { expect, test } from 'vitest'
import { sortByBytes, type ByteKeys } from './byte-sort.js'

/** Keys laid out as a key table holds them: in slabs of a few bytes, each key whole in one. */
function held (keys: readonly string[], slabBytes: number): ByteKeys {
  const bytes: Uint8Array[] = []
  const slabOf = new Int32Array(keys.length)
  const starts = new Int32Array(keys.length)
  const lengths = new Int32Array(keys.length)
  let slab = new Uint8Array(0)
  let end = 0
  keys.forEach((key, k) => {
    if (bytes.length === 0 || end + key.length > slab.length) {
      bytes.push(slab = new Uint8Array(Math.max(slabBytes, key.length)))
      end = 0
    }
    for (let i = 0; i < key.length; i++) slab[end + i] = key.charCodeAt(i)
    slabOf[k] = bytes.length - 1
    starts[k] = end
    lengths[k] = key.length
    end += key.length
  })
  return { bytes, slabOf, starts, lengths }
}

const sortedBy = (keys: readonly string[], slabBytes: number): string[] => {
  const order = Int32Array.from(keys, (_, k) => k)
  sortByBytes(order, held(keys, slabBytes))
  return Array.from(order, (k) => keys[k] as string)
}

test('puts distinct ASCII keys in code-unit order, a key before those it is a prefix of, whatever prefix they share', () => {
  // Few characters (NUL and DEL among them) and shared leads longer than a word read at once, so
  // that ranges go many bytes deep, end inside a word and fall to the insertion sort.
  const char = fc.constantFrom('\u0000', 'a', 'b', '.', '\u007f')
  const lead = fc.constantFrom('', 'node-0001.gitea.', 'node-0001.gitea.secret.secret-')
  const key = fc.tuple(lead, fc.string({ unit: char, maxLength: 9 })).map(([l, rest]) => l + rest)
  fc.assert(fc.property(fc.uniqueArray(key, { maxLength: 300 }), fc.integer({ min: 1, max: 64 }), (keys, slabBytes) => {
    expect(sortedBy(keys, slabBytes)).toEqual([...keys].sort())
  }))
})

test('orders keys that end inside the bytes read at once before their extensions, NUL ones included', () => {
  // Two characters: most keys share their first word with a dozen others, some ending inside it.
  const key = fc.string({ unit: fc.constantFrom('\u0000', 'a'), maxLength: 10 })
  fc.assert(fc.property(fc.uniqueArray(key, { minLength: 100, maxLength: 400 }), (keys) => {
    expect(sortedBy(keys, 1 << 16)).toEqual([...keys].sort())
  }))
})

test('sorts a mesh\'s keys of long shared prefixes, shuffled, as the native sort does', () => {
  const keys: string[] = []
  for (let node = 0; node < 40; node++) {
    for (const module of ['gitea', 'keycloak', 'mail']) {
      for (let i = 0; i < 30; i++) keys.push(`node-${String(node).padStart(4, '0')}.${module}.secret.secret-${i}`)
    }
  }
  const shuffled = keys.map((key, i) => ({ key, at: (i * 7919) % keys.length })).sort((a, b) => a.at - b.at).map((k) => k.key)
  expect(sortedBy(shuffled, 1 << 16)).toEqual([...keys].sort())
})
