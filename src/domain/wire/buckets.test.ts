import { describe, expect, test } from 'vitest'
import { BUCKET_DESCRIPTIONS, BY_NAMES, FIELD_DESCRIPTIONS, WHATS, type What } from './buckets.js'
import { BUCKETS, FIELDS, keyOf, parseKey, shapeOf, type Fields } from './key-shapes.js'
import { FACET_BY, FilterValues, NARROWED_BY, ProvisioningRequest, RequestFields } from './schemas.js'
import { readRequest } from './request.js'

const described = (what: What) => BUCKET_DESCRIPTIONS[what] as { key: readonly string[], facets: readonly string[], indexes: readonly (readonly string[])[], aliases?: Record<string, string> }

describe.each(WHATS)('the %s description drives', (what) => {
  const { bucket, key } = BUCKET_DESCRIPTIONS[what]
  const { facets, indexes, aliases = {} } = described(what)

  test('its bucket and key shape', () => {
    expect(BUCKETS[what]).toBe(bucket)
    expect(FIELDS[what]).toEqual(key)
    expect(shapeOf(what)).toBe(key.map((f) => `<${f}>`).join('.'))
  })

  test('the reading of its keys, a decoded field by its codec', () => {
    const fields = Object.fromEntries(key.map((f) => [f, FIELD_DESCRIPTIONS[f].example])) as Fields<typeof what>
    const written = keyOf(what, fields)
    expect(written.split('.')).toHaveLength(key.length)
    expect(parseKey(what, written)).toEqual({ ok: true, values: key.map((f) => FIELD_DESCRIPTIONS[f].example) })
  })

  test('its filters: every key field and alias, each taken alone and refused elsewhere', () => {
    expect([...NARROWED_BY[what]].sort()).toEqual([...key, ...Object.keys(aliases)].sort())
    for (const field of NARROWED_BY[what]) {
      const example = FIELD_DESCRIPTIONS[field as keyof typeof FIELD_DESCRIPTIONS].example
      expect(readRequest({ what, [field]: example }).filter).toEqual({ [aliases[field] ?? field]: [example] })
      expect(FilterValues[field as keyof typeof FilterValues]).toBeDefined()
      expect(Object.keys(RequestFields)).toContain(field)
      expect(Object.keys(ProvisioningRequest.properties)).toContain(field)
    }
    for (const other of WHATS.filter((w) => w !== what)) {
      for (const field of NARROWED_BY[other].filter((f) => !NARROWED_BY[what].includes(f))) {
        expect(() => readRequest({ what, [field]: 'x' })).toThrow(`${field} does not narrow what=${what}`)
      }
    }
  })

  test('its facets: `by` takes them and their aliases, and refuses its other fields', () => {
    expect(FACET_BY[what]).toEqual(facets)
    for (const by of facets) expect(readRequest({ what, by }).by).toBe(by)
    for (const [alias, field] of Object.entries(aliases)) {
      if (facets.includes(field)) expect(readRequest({ what, by: alias }).by).toBe(field)
    }
    for (const by of key.filter((f) => !facets.includes(f))) {
      expect(() => readRequest({ what, by })).toThrow(`"${by}" is no field of ${what} whose values are counted`)
    }
    for (const by of facets) expect(BY_NAMES).toContain(by)
  })

  test('indexes, facets and aliases name its key fields', () => {
    for (const fields of [facets, ...indexes, Object.values(aliases)]) {
      for (const f of fields) expect(key).toContain(f)
    }
  })
})
