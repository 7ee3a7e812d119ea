import { describe, expect, test } from 'vitest'
import { ProvisionerError } from './errors.js'
import { readParameters, readQuery } from './request.js'

describe('readQuery reads', () => {
  test.each([
    [{}, { what: 'registry', filter: {} }],
    [{ what: 'registry', kind: 'secret' }, { what: 'registry', filter: { kind: 'secret' } }],
    [{ what: 'needs', node: 'n1', module: 'gitea', kind: 'secret', limit: 5 }, { what: 'needs', filter: { node: 'n1', module: 'gitea', kind: 'secret' }, limit: 5 }],
    [{ what: 'applied', node: 'n1', after: 'n1.a' }, { what: 'applied', filter: { node: 'n1' }, after: 'n1.a' }],
    [{ what: 'collect', module: 'gitea', collection: 'shell:zsh:normal' }, { what: 'collect', filter: { contributor: 'gitea', collection: 'shell:zsh:normal' } }],
    [{ what: 'collect', contributor: 'gitea', module: 'gitea' }, { what: 'collect', filter: { contributor: 'gitea' } }],
    [{ what: 'needs', kind: 'secret', name: 'forge-account' }, { what: 'needs', filter: { kind: 'secret', name: 'forge-account' } }]
  ])('%j', (input, query) => {
    expect(readQuery(input)).toEqual(query)
  })
})

describe('readQuery refuses, naming the field and what works', () => {
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
    try { readQuery(input) } catch (err) { caught = err }
    expect(caught).toBeInstanceOf(ProvisionerError)
    expect((caught as ProvisionerError).code).toBe('BAD_REQUEST')
    expect((caught as ProvisionerError).field).toBe(field)
    expect((caught as ProvisionerError).message).toMatch(message)
  })
})

test('takes back as after any key NATS can hold, as long as it is', () => {
  const key = `ace.gitea.secret.${'x'.repeat(3000)}`
  expect(readQuery({ what: 'needs', after: key })).toEqual({ what: 'needs', filter: {}, after: key })
})

test('a value nested deeper than JSON.stringify goes is refused in words, never a stack overflow', () => {
  const deep = JSON.parse('['.repeat(10_000) + ']'.repeat(10_000)) as unknown
  expect(refusalOf(() => readQuery(deep))).toEqual({ error: { code: 'BAD_REQUEST', message: 'the request must be a JSON object such as {"what":"needs","node":"n1"}; got [...] (nested too deep to show)' } })
  expect(refusalOf(() => readQuery({ what: deep }))).toEqual({ error: { code: 'BAD_REQUEST', field: 'what', message: 'what: [...] (nested too deep to show) will not do; it takes one of registry, needs, applied, collect, nodes, modules' } })
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
    [{ node: 'n1', limit: '5' }, { what: 'needs', filter: { node: 'n1' }, limit: 5 }],
    [{ after: 'n1.a', limit: ' 7 ' }, { what: 'needs', filter: {}, after: 'n1.a', limit: 7 }]
  ])('%j', (parameters, query) => {
    expect(readParameters('needs', parameters, 'GET /v1/needs')).toEqual(query)
  })

  test.each([
    [{ limit: '1.5' }, { what: 'needs', limit: 1.5 }],
    [{ limit: 'abc' }, { what: 'needs', limit: 'abc' }],
    [{ limit: ['1', '2'] }, { what: 'needs', limit: ['1', '2'] }],
    [{ node: ['a', 'b'] }, { what: 'needs', node: ['a', 'b'] }],
    [{ node: 'a b' }, { what: 'needs', node: 'a b' }],
    [{ collection: 'shell' }, { what: 'needs', collection: 'shell' }]
  ])('%j is refused in the words the verb says for the same field', (parameters, request) => {
    expect(refusalOf(() => readParameters('needs', parameters, 'GET /v1/needs'))).toEqual(refusalOf(() => readQuery(request)))
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
    [{ ...goStruct, what: 'needs', node: 'n1' }, { what: 'needs', filter: { node: 'n1' } }],
    [{ ...goStruct, what: 'applied', limit: 5 }, { what: 'applied', filter: {}, limit: 5 }],
    [{ ...goStruct, what: 'collect', collection: 'shell:zsh:normal', after: 'n1.x.y' }, { what: 'collect', filter: { collection: 'shell:zsh:normal' }, after: 'n1.x.y' }],
    [{ what: null, kind: null, limit: null }, { what: 'registry', filter: {} }]
  ])('%j', (input, query) => {
    expect(readQuery(input)).toEqual(query)
  })
})
