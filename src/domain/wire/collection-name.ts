// The collection-name codec (docs/buckets.md): a name may hold any character, a key token only
// A-Z a-z 0-9 _ - / and the escape `=XX`. One spelling per name, so one key per item.

const PLAIN = /^[A-Za-z0-9_\-/]$/
const HEX = '0123456789ABCDEF'
const utf8 = new TextEncoder()
const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/** Encodes a collection name as a key token. Throws a RangeError for a string that is not well-formed UTF-16. */
export function encodeCollection (name: string): string {
  if (!name.isWellFormed()) throw new RangeError('the name holds a lone surrogate, which no UTF-8 spells')
  let out = ''
  for (const byte of utf8.encode(name)) {
    const ch = String.fromCharCode(byte)
    out += byte < 0x80 && PLAIN.test(ch) ? ch : `=${HEX[byte >> 4]}${HEX[byte & 15]}`
  }
  return out
}

export type Decoded = { ok: true, name: string } | { ok: false, reason: string }

/** Decodes a key token into the collection name, refusing any spelling `encodeCollection` would not write. */
export function decodeCollection (token: string): Decoded {
  const bytes: number[] = []
  for (let i = 0; i < token.length; i++) {
    const ch = token[i] as string
    if (ch !== '=') {
      if (!PLAIN.test(ch)) return { ok: false, reason: `"${ch}" must be written as an =XX escape` }
      bytes.push(ch.charCodeAt(0))
      continue
    }
    const hex = token.slice(i + 1, i + 3)
    if (!/^[0-9A-F]{2}$/.test(hex)) {
      return { ok: false, reason: `"=${hex}" at ${i} is not an escape: = takes two upper-case hex digits (=3A, =3D)` }
    }
    const byte = parseInt(hex, 16)
    if (byte < 0x80 && PLAIN.test(String.fromCharCode(byte))) {
      return { ok: false, reason: `"=${hex}" escapes "${String.fromCharCode(byte)}", which is written plain` }
    }
    bytes.push(byte)
    i += 2
  }
  try {
    return { ok: true, name: strictUtf8.decode(new Uint8Array(bytes)) }
  } catch {
    return { ok: false, reason: 'its escapes do not spell UTF-8' }
  }
}
