import { describe, expect, test } from 'vitest'
import { canonicalJson, compileRegistry, parseDomainTable } from './registry.js'
import { DEFAULT_DOMAINS } from './registry-table.js'

const text = (b: Uint8Array) => new TextDecoder().decode(b)

test('canonical JSON sorts keys and drops white space and undefined', () => {
  expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: 'x' }, u: undefined })).toBe('{"a":{"c":"x","d":[1,{"y":2,"z":1}]},"b":1}')
})

describe('the default table compiles to docs/registry.md', () => {
  const compiled = compileRegistry(DEFAULT_DOMAINS)
  test('every kind, once', () => {
    expect([...compiled.keys()].sort()).toEqual(['access', 'bound', 'collected', 'config', 'consumers', 'contribution', 'dir', 'environment', 'machine', 'port', 'seat', 'secret', 'shell'])
  })
  test.each([
    ['secret', '{"kind":"secret","module":"mesh-vault","verb":"mesh-vault.secret"}'],
    ['bound', '{"bucket":"<provider-module>_bound","key":"<node>.<module>.<provision>[.<local>]","kind":"bound","module":"<provider-module>"}'],
    ['config', '{"bucket":"mesh-controller_config","key":"<node>.<module>","kind":"config","module":"mesh-controller"}'],
    ['shell', '{"bucket":"mesh-provisioner_collect","collection":"shell","key":"<node>.<collection>.<contributor>","kind":"shell","module":"mesh-provisioner"}'],
    ['collected', '{"bucket":"mesh-provisioner_collect","key":"<node>.<collection>.<contributor>","kind":"collected","module":"mesh-provisioner"}']
  ])('%s', (kind, bytes) => {
    expect(text(compiled.get(kind)?.bytes as Uint8Array)).toBe(bytes)
  })
  test('placement kinds point at the assignments mirror and no secret is in a bucket', () => {
    for (const kind of ['dir', 'access', 'port', 'seat', 'machine']) expect(compiled.get(kind)?.value).toMatchObject({ bucket: 'mesh-controller_assignments', module: 'mesh-controller', key: '<node>.<module>' })
    expect(compiled.get('secret')?.value.bucket).toBeUndefined()
    expect(compiled.get('consumers')?.value).toMatchObject({ verb: 'mesh-vault.consumers' })
  })
})

describe('compilation refuses', () => {
  test.each([
    [[{ kinds: ['a'], module: 'm', verb: 'v' }, { kinds: ['b', 'a'], module: 'n', verb: 'w' }], /kind "a" is answered by two domains, domain #1 \(module m, kinds a\) and domain #2 \(module n, kinds b,a\)/],
    [[{ kinds: ['a'], module: 'm' }], /either a bucket .* or a verb, not neither/],
    [[{ kinds: ['a'], module: 'm', verb: 'v', bucket: 'b', key: 'k' }], /not both/],
    [[{ kinds: ['a'], module: 'm', bucket: 'b' }], /without its key shape/],
    [[{ kinds: ['a'], module: 'm', verb: 'v', collection: 'c' }], /do not apply/]
  ])('%j', (table, message) => {
    expect(() => compileRegistry(table)).toThrow(message)
  })
})

describe('a domain table file', () => {
  test('is read and validated', () => {
    expect(parseDomainTable('[{"kinds":["secret"],"module":"mesh-vault","verb":"mesh-vault.secret"}]', 'f.json')).toHaveLength(1)
  })
  test.each([
    ['{', /f.json is not JSON .* it takes an array of domains/],
    ['{"kinds":["a"]}', /f.json at \/: /],
    ['[{"kinds":["a b"],"module":"m","verb":"v"}]', /f.json at \/0\/kinds\/0/],
    ['[{"kinds":["a"],"module":"m","verb":"v","colour":"red"}]', /f.json at \/0/],
    ['[{"kinds":["a"],"module":"m","verb":"v"},{"kinds":["a"],"module":"n","verb":"v"}]', /answered by two domains/],
    ['[{"kinds":["config","secret"],"module":"m","bucket":"m_kv","key":"<node>"}]', /domain #1 \(module m, kinds config,secret\) puts kind "secret" in bucket m_kv, but a secret is never in a bucket; answer it by a verb/]
  ])('refuses %s', (json, message) => {
    expect(() => parseDomainTable(json, 'f.json')).toThrow(expect.objectContaining({ name: 'DomainTableError' }))
    expect(() => parseDomainTable(json, 'f.json')).toThrow(message)
  })
})
