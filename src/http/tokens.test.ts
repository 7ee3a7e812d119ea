import { createHash } from 'node:crypto'
import { describe, expect, test } from 'vitest'
import { parseTokens, type Token } from '../settings/tokens-file.js'
import { findToken, forbidden } from './tokens.js'

const hex = (token: string): string => createHash('sha256').update(token).digest('hex')
const file = (...tokens: unknown[]): string => JSON.stringify({ tokens })

describe('a presented token', () => {
  const tokens = parseTokens(file({ name: 'console', sha256: hex('secret-c'), nodes: '*' }, { name: 'ace', sha256: hex('secret-a'), nodes: ['ace'] }), 't.json')
  test.each([
    ['secret-c', 'console'],
    ['secret-a', 'ace'],
    ['secret-', undefined],
    ['', undefined],
    [hex('secret-a'), undefined]
  ])('%j is %s', (presented, name) => {
    expect(findToken(tokens, presented)?.name).toBe(name)
  })
})

describe('what a token reads', () => {
  const all: Token = { name: 'console', sha256: hex('x'), nodes: '*', metrics: false }
  const ace: Token = { name: 'ace', sha256: hex('x'), nodes: ['ace', 'bob'], metrics: false }
  const scraper: Token = { ...all, metrics: true }
  test.each([
    [all, { of: 'nodes', nodes: undefined }, undefined],
    [all, { of: 'nodes', nodes: ['zed'] }, undefined],
    [ace, { of: 'registry' }, undefined],
    [ace, { of: 'self' }, undefined],
    [ace, { of: 'nodes', nodes: ['bob'] }, undefined],
    [ace, { of: 'nodes', nodes: ['ace', 'bob'] }, undefined],
    [ace, { of: 'nodes', nodes: undefined }, 'this token reads the registry and node ace, bob only: name one of them in the path'],
    [ace, { of: 'nodes', nodes: ['zed'] }, 'this token reads the registry and node ace, bob only, not node zed'],
    [ace, { of: 'nodes', nodes: ['ace', 'zed', 'yak'] }, 'this token reads the registry and node ace, bob only, not node zed, yak'],
    [all, { of: 'metrics' }, 'this token does not read /metrics; the scraper\'s token has "metrics": true in the tokens file'],
    [scraper, { of: 'metrics' }, undefined]
  ] as const)('%o reading %o: %s', (token, reading, refusal) => {
    expect(forbidden(token, reading)).toBe(refusal)
  })
})
