import { createHash } from 'node:crypto'
import { describe, expect, test } from 'vitest'
import { newToken, parseTokens } from './tokens-file.js'

const hex = (token: string): string => createHash('sha256').update(token).digest('hex')
const file = (...tokens: unknown[]): string => JSON.stringify({ tokens })

describe('a tokens file', () => {
  test('is read: names, digests, nodes and the metrics flag', () => {
    const tokens = parseTokens(file({ name: 'console', sha256: hex('c'), nodes: '*', metrics: true }, { name: 'ace', sha256: hex('a'), nodes: ['ace'] }), 't.json')
    expect(tokens.map((t) => [t.name, t.sha256, t.nodes, t.metrics])).toEqual([
      ['console', hex('c'), '*', true],
      ['ace', hex('a'), ['ace'], false]
    ])
  })

  test.each([
    ['{', /^t\.json is not JSON \(.*\); it takes \{"tokens":\[/],
    ['[]', /^t\.json does not fit: it takes \{"tokens":\[/],
    ['{"tokens":[],"extra":1}', /^t\.json does not fit/],
    [file({ name: 'ace', sha256: 'ABC', nodes: ['ace'] }), /^t\.json: token "ace": sha256 takes the SHA-256 of the token as 64 lower-case hex digits/],
    [file({ name: 'ace', sha256: hex('a'), nodes: [] }), /^t\.json: token "ace": nodes takes "\*" or a list of 1 to 100 node names$/],
    [file({ name: 'ace', sha256: hex('a'), nodes: Array.from({ length: 101 }, (_, i) => `n${i}`) }), /^t\.json: token "ace": nodes takes "\*" or a list of 1 to 100 node names$/],
    [file({ name: 'ace', sha256: hex('a'), nodes: ['a b'] }), /^t\.json: token "ace": nodes takes/],
    [file({ name: 'ace', sha256: hex('a'), nodes: 'ace' }), /^t\.json: token "ace": nodes takes/],
    [file({ name: 'ace', sha256: hex('a'), nodes: '*', metrics: 'yes' }), /^t\.json: token "ace": metrics takes true or false$/],
    [file({ name: 'ace', sha256: hex('a'), nodes: '*', token: 'x' }), /^t\.json: token "ace": "token" is not a field of a token; it takes name, sha256, nodes, metrics$/],
    [file({ name: 'ace', nodes: '*' }), /^t\.json: token "ace": it has no sha256; sha256 takes/],
    [file({ name: 'c', sha256: hex('c'), nodes: '*' }, { name: 'a b', sha256: hex('a'), nodes: '*' }), /^t\.json: token #2: name takes 1 to 64 of/],
    [file({ sha256: hex('a'), nodes: '*' }), /^t\.json: token #1: it has no name; name takes/],
    [file('ace'), /^t\.json: token #1: it is not an object; each token takes the shape \{"name":"ace"/],
    [file({ name: 'a', sha256: hex('a'), nodes: '*' }, { name: 'a', sha256: hex('b'), nodes: '*' }), /^t\.json: token "a" is named twice \(#1 and #2\); give each token its own name$/],
    [file({ name: 'a', sha256: hex('a'), nodes: '*' }, { name: 'b', sha256: hex('a'), nodes: '*' }), /^t\.json: token "b" has the same sha256 as token "a"/]
  ])('refuses %s naming the entry', (text, message) => {
    expect(() => parseTokens(text, 't.json')).toThrow(expect.objectContaining({ name: 'StartError', code: 'TOKENS_FILE_INVALID' }))
    expect(() => parseTokens(text, 't.json')).toThrow(message)
  })
})

test('a new token is random, and its entry admits it alone', () => {
  const a = newToken('ace', ['ace'], false)
  const b = newToken('ace', ['ace'], false)
  expect(a.token).not.toBe(b.token)
  expect(a.token).toMatch(/^[A-Za-z0-9_-]{43}$/)
  expect(a.entry).toEqual({ name: 'ace', sha256: hex(a.token), nodes: ['ace'] })
  expect(newToken('console', '*', true).entry).toMatchObject({ nodes: '*', metrics: true })
  expect(() => newToken('a b', '*', false)).toThrow('token "a b": name takes')
})
