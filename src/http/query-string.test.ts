import { expect, test } from 'vitest'
import { brokenEscape } from './query-string.js'

test.each([
  ['node=ace&module=gitea', undefined],
  ['collection=shell%3Azsh&node=%C3%A9', undefined],
  ['node=%ZZ', 'node'],
  ['node=ace&collection=shell%3', 'collection'],
  ['node=%C3%28', 'node'],
  ['kind=%E2%82', 'kind'],
  ['no%de=x', 'no%de'],
  ['n%6Fde=%G1', 'node'],
  ['flag', undefined]
])('%s: %s', (query, name) => {
  expect(brokenEscape(query)).toBe(name)
})
