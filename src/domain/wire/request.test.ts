import { describe, expect, test } from 'vitest'
import { ProvisionerError } from './errors.js'
import { readParameters, readBucketRequest } from './request.js'

describe('readBucketRequest reads', () => {
  test.each([
    [{}, { what: 'registry', filter: {} }],
    [{ what: 'registry', kind: 'secret' }, { what: 'registry', filter: { kind: ['secret'] } }],
    [{ what: 'needs', node: 'n1', module: 'gitea', kind: 'secret', limit: 5 }, { what: 'needs', filter: { node: ['n1'], module: ['gitea'], kind: ['secret'] }, limit: 5 }],
    [{ what: 'applied', node: 'n1', after: 'n1.a' }, { what: 'applied', filter: { node: ['n1'] }, after: 'n1.a' }],
    [{ what: 'collect', module: 'gitea', collection: 'shell:zsh:normal' }, { what: 'collect', filter: { contributor: ['gitea'], collection: ['shell:zsh:normal'] } }],
    [{ what: 'collect', contributor: 'gitea', module: 'gitea' }, { what: 'collect', filter: { contributor: ['gitea'] } }],
    [{ what: 'needs', kind: 'secret', name: 'forge-account' }, { what: 'needs', filter: { kind: ['secret'], name: ['forge-account'] } }]
  ])('%j', (input, expected) => {
    expect(readBucketRequest(input)).toEqual(expected)
  })
})

describe('readBucketRequest refuses, naming the field and what works', () => {
  test.each([
    [null, undefined, /must be a JSON object/],
    [[1], undefined, /must be a JSON object/],
    ['needs', undefined, /must be a JSON object/],
    [{ what: 'everything' }, 'what', /what: "everything" will not do; it takes one of registry, needs, applied, collect/],
    [{ nodes: 'n1' }, 'nodes', /"nodes" is not a request field; the fields are what, node, module/],
    [JSON.parse('{"__proto__":"x"}'), '__proto__', /"__proto__" is not a request field/],
    [{ constructor: 'x' }, 'constructor', /"constructor" is not a request field/],
    [{ toString: 'x' }, 'toString', /"toString" is not a request field/],
    [{ what: 'needs', node: 'n1.x' }, 'node', /node: "n1.x" will not do; it takes one key token/],
    [{ what: 'needs', node: 7 }, 'node', /node: 7 will not do/],
    [{ what: 'needs', limit: -1 }, 'limit', /limit: -1 will not do; it takes a whole number from 1 to 10000/],
    [{ what: 'needs', limit: 1.5 }, 'limit', /limit: 1.5/],
    [{ what: 'needs', limit: '5' }, 'limit', /limit: "5"/],
    [{ what: 'needs', collection: 'x' }, 'collection', /collection does not narrow what=needs; needs takes node, module, kind, name, after, limit, since/],
    [{ what: 'applied', kind: 'secret' }, 'kind', /kind does not narrow what=applied/],
    [{ kind: 'secret', node: 'n1' }, 'node', /node does not narrow what=registry; registry takes kind, after, limit, since/],
    [{ what: 'collect', module: 'a', contributor: 'b' }, 'contributor', /name the contributor twice/],
    [{ what: 'collect', collection: 'a\ud800' }, 'collection', /lone surrogate/],
    [{ what: 'needs', name: 'a.b' }, 'name', /name: "a.b" will not do; it takes one key token/],
    [{ what: 'applied', name: 'x' }, 'name', /name does not narrow what=applied; applied takes node, module, after, limit, since/],
    [{ what: 'needs', node: ' ' }, 'node', /node: " " will not do/],
    [{ what: 'needs', limit: false }, 'limit', /limit: false will not do/],
    [{ what: '', nodes: '' }, 'nodes', /"nodes" is not a request field/],
    [{ constructor: 'x' }, 'constructor', /"constructor" is not a request field/],
    [{ what: 'needs', kind: 'k'.repeat(257) }, 'kind', /kind: "k{56}\.\.\. will not do; it takes one key token of 1 to 256 of/]
  ])('%j', (input, field, message) => {
    let caught: unknown
    try { readBucketRequest(input) } catch (err) { caught = err }
    expect(caught).toBeInstanceOf(ProvisionerError)
    expect((caught as ProvisionerError).code).toBe('BAD_REQUEST')
    expect((caught as ProvisionerError).field).toBe(field)
    expect((caught as ProvisionerError).message).toMatch(message)
  })
})

test('takes back as after any key NATS can hold, as long as it is', () => {
  const key = `ace.gitea.secret.${'x'.repeat(3000)}`
  expect(readBucketRequest({ what: 'needs', after: key })).toEqual({ what: 'needs', filter: {}, after: key })
})

test('a value nested deeper than JSON.stringify goes is refused in words, never a stack overflow', () => {
  const deep = JSON.parse('['.repeat(10_000) + ']'.repeat(10_000)) as unknown
  expect(refusalOf(() => readBucketRequest(deep))).toEqual({ error: { code: 'BAD_REQUEST', message: 'the request must be a JSON object such as {"what":"needs","node":"n1"}; got [...] (nested too deep to show)' } })
  expect(refusalOf(() => readBucketRequest({ what: deep }))).toEqual({ error: { code: 'BAD_REQUEST', field: 'what', message: 'what: [...] (nested too deep to show) will not do; it takes one of registry, needs, applied, collect, nodes, modules' } })
})

/** The refusal `read` meets, as its body. */
function refusalOf (read: () => unknown): unknown {
  try {
    read()
  } catch (err) {
    return (err as ProvisionerError).toBody()
  }
  throw new Error('not refused')
}

describe('readParameters reads a query string as the verb reads the same fields', () => {
  test.each([
    [{}, { what: 'needs', filter: {} }],
    [{ node: 'n1', limit: '5' }, { what: 'needs', filter: { node: ['n1'] }, limit: 5 }],
    [{ after: 'n1.a', limit: '007' }, { what: 'needs', filter: {}, after: 'n1.a', limit: 7 }]
  ])('%j', (parameters, expected) => {
    expect(readParameters('needs', parameters, 'GET /v1/needs')).toEqual(expected)
  })

  test.each([
    [{ limit: '1.5' }, { what: 'needs', limit: '1.5' }],
    [{ limit: 'abc' }, { what: 'needs', limit: 'abc' }],
    [{ limit: ['1', '2'] }, { what: 'needs', limit: ['1', '2'] }],
    [{ node: ['a', 'b c'] }, { what: 'needs', node: ['a', 'b c'] }],
    [{ node: 'a b' }, { what: 'needs', node: 'a b' }],
    [{ collection: 'shell' }, { what: 'needs', collection: 'shell' }]
  ])('%j is refused in the words the verb says for the same field', (parameters, request) => {
    expect(refusalOf(() => readParameters('needs', parameters, 'GET /v1/needs'))).toEqual(refusalOf(() => readBucketRequest(request)))
  })

  // Read whole or not at all: Number() would take each of these as a number.
  test.each(['0x10', ' 5 ', '5 ', '1e3', '+5', '0b1', '16.0'])('limit=%j is refused naming limit and what it takes', (limit) => {
    expect(refusalOf(() => readParameters('needs', { limit }, 'GET /v1/needs'))).toEqual({
      error: { code: 'BAD_REQUEST', message: `limit: ${JSON.stringify(limit)} will not do; it takes a whole number from 1 to 10000`, field: 'limit' }
    })
  })

  test.each(['foo', 'what', 'constructor', '__proto__', 'toString', 'hasOwnProperty'])('an unknown parameter %s is refused naming it and what the route takes', (name) => {
    const parameters = JSON.parse(`{${JSON.stringify(name)}:"x"}`) as object
    expect(refusalOf(() => readParameters('needs', parameters, 'GET /v1/needs'))).toEqual({
      error: { code: 'BAD_REQUEST', message: `"${name}" is not a parameter of GET /v1/needs; it takes node, module, kind, name, after, limit, since`, field: name }
    })
  })

  test('a route that takes no parameters says so', () => {
    expect(refusalOf(() => readParameters('registry', { kind: 'secret' }, 'GET /v1/registry/:kind', []))).toEqual({
      error: { code: 'BAD_REQUEST', message: '"kind" is not a parameter of GET /v1/registry/:kind; it takes none', field: 'kind' }
    })
  })
})

describe('a field at its type\'s zero value counts as not given, as a Go struct without omitempty sends it', () => {
  const goStruct = { what: '', node: '', module: '', contributor: '', kind: '', name: '', collection: '', after: '', limit: 0 }
  test.each([
    [goStruct, { what: 'registry', filter: {} }],
    [{ what: '', node: '', collection: '', limit: 0 }, { what: 'registry', filter: {} }],
    [{ ...goStruct, what: 'needs', node: 'n1' }, { what: 'needs', filter: { node: ['n1'] } }],
    [{ ...goStruct, what: 'applied', limit: 5 }, { what: 'applied', filter: {}, limit: 5 }],
    [{ ...goStruct, what: 'collect', collection: 'shell:zsh:normal', after: 'n1.x.y' }, { what: 'collect', filter: { collection: ['shell:zsh:normal'] }, after: 'n1.x.y' }],
    [{ what: null, kind: null, limit: null }, { what: 'registry', filter: {} }]
  ])('%j', (input, expected) => {
    expect(readBucketRequest(input)).toEqual(expected)
  })
})

describe('a filter field takes several values (docs/verb.md)', () => {
  test.each([
    [{ what: 'needs', node: ['g14', 'ace'] }, { what: 'needs', filter: { node: ['ace', 'g14'] } }],
    [{ what: 'needs', node: ['ace'] }, { what: 'needs', filter: { node: ['ace'] } }],
    [{ what: 'needs', node: 'ace' }, { what: 'needs', filter: { node: ['ace'] } }],
    [{ what: 'needs', node: ['ace', 'ace', 'g14'] }, { what: 'needs', filter: { node: ['ace', 'g14'] } }],
    [{ what: 'needs', node: [] }, { what: 'needs', filter: {} }],
    [{ what: 'needs', node: [''] }, { what: 'needs', filter: {} }],
    [{ what: 'registry', node: [], limit: [] }, { what: 'registry', filter: {} }],
    [{ what: 'collect', module: ['b', 'a'], contributor: ['a', 'b'], collection: ['shell:zsh:normal', 'é'] }, { what: 'collect', filter: { contributor: ['a', 'b'], collection: ['shell:zsh:normal', 'é'] } }],
    [{ what: 'needs', node: Array.from({ length: 100 }, (_, i) => `n${i}`) }, { what: 'needs', filter: { node: Array.from({ length: 100 }, (_, i) => `n${i}`).sort() } }]
  ])('%j', (input, expected) => {
    expect(readBucketRequest(input)).toEqual(expected)
  })

  test.each([
    [{ what: 'needs', node: ['n1', ''] }, 'node', 'node: ["n1",""] will not do; it takes one key token of 1 to 256 of A-Z a-z 0-9 _ - / = (e.g. "n1"), or a list of such values (at most 100 distinct)'],
    [{ what: 'needs', node: ['n1', null] }, 'node', 'node: ["n1",null] will not do; it takes one key token of 1 to 256 of A-Z a-z 0-9 _ - / = (e.g. "n1"), or a list of such values (at most 100 distinct)'],
    [{ what: 'needs', kind: ['secret', 'a.b'] }, 'kind', 'kind: ["secret","a.b"] will not do; it takes one key token of 1 to 256 of A-Z a-z 0-9 _ - / = (e.g. "secret"), or a list of such values (at most 100 distinct)'],
    [{ what: 'needs', node: Array.from({ length: 101 }, (_, i) => `n${i}`) }, 'node', 'node: 101 distinct values, more than one request takes; it takes at most 100: ask in several requests'],
    [{ what: 'applied', kind: ['a', 'b'] }, 'kind', 'kind does not narrow what=applied; applied takes node, module, after, limit, since'],
    [{ what: 'collect', module: ['a', 'b'], contributor: 'a' }, 'contributor', 'module and contributor name the contributor twice, as ["a","b"] and "a"; give one'],
    [{ what: 'collect', collection: ['a', 'b\ud800'] }, 'collection', 'collection: "b\\ud800" holds a lone surrogate; it takes a collection name of 1 to 256 characters (e.g. "shell:zsh:normal"), or a list of such values (at most 100 distinct)'],
    [{ what: 'needs', limit: [5] }, 'limit', 'limit: [5] will not do; it takes a whole number from 1 to 10000']
  ])('%j is refused naming the field', (input, field, message) => {
    expect(refusalOf(() => readBucketRequest(input))).toEqual({ error: { code: 'BAD_REQUEST', field, message } })
  })

  test('over HTTP, by repeating the parameter', () => {
    expect(readParameters('needs', { node: ['g14', 'ace'], module: 'gitea' }, 'GET /v1/needs')).toEqual({ what: 'needs', filter: { node: ['ace', 'g14'], module: ['gitea'] } })
    expect(refusalOf(() => readParameters('needs', { node: ['ace', ''] }, 'GET /v1/needs'))).toEqual(refusalOf(() => readBucketRequest({ what: 'needs', node: ['ace', ''] })))
  })
})
