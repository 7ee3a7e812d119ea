import { expect, test } from 'vitest'
import { refusalOf } from './access.js'
import type { Token } from '../settings/tokens-file.js'

const ace: Token = { name: 'ace', sha256: 'a'.repeat(64), nodes: ['ace'], metrics: false }

test.each([
  ['the token still reads it', [ace], { of: 'nodes', nodes: ['ace'] }, undefined],
  ['the token is gone', [], { of: 'nodes', nodes: ['ace'] }, 'UNAUTHORIZED'],
  ['the token no longer reads the node', [{ ...ace, nodes: ['g14'] }], { of: 'nodes', nodes: ['ace'] }, 'FORBIDDEN'],
  ['the registry, read by every token', [{ ...ace, nodes: ['g14'] }], { of: 'registry' }, undefined]
] as const)('a held request when the tokens are read again: %s', (_, tokens, reading, code) => {
  expect(refusalOf({ sha256: ace.sha256, reading }, tokens)?.code).toBe(code)
})
