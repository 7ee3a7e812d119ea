// Which routes take no token, and which read what every token reads (docs/access.md): each route
// says it of itself, in its own module under src/http/routes/ (`config: { open: true }`,
// `config: { access: 'registry' }`...), and no URL pattern decides it. Every route the gateway
// registers is walked as fastify registers it (its onRoute hook, reached through fastify's
// `fastify.initialization` diagnostics channel), so that a route added later is held to the lists
// below without anyone remembering to add it here; then each is asked without a token, and those
// every token reads with a token of one node.

import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { beforeAll, expect, test, vi } from 'vitest'
import { newToken } from '../src/settings/tokens-file.js'
import type { Running } from '../src/service.js'
import { request } from './support/http.js'
import { suiteFixture, untilReady } from './support/service.js'

/** The routes anyone may read: the process's health, the documents and the page that shows them. */
const OPEN = ['/', '/asyncapi.json', '/docs', '/docs/*', '/healthz', '/openapi.json', '/page/:file', '/readyz']
/** The checked routes that read no nodes' entries, by what they read; every other checked route reads the nodes' (`reader`). */
const READS = {
  metrics: ['/metrics'],
  registry: ['/v1/registry', '/v1/registry/:kind', '/v1/registry/events', '/v1/registry/facets'],
  self: ['/v1/token/self']
}

const fx = suiteFixture()
const all = newToken('console', '*', false)
/** A token of one node: it reads the registry whole, and no other node's entries. */
const ace = newToken('ace', ['ace'], false)
const routes: RouteOptions[] = []
let running: Running

beforeAll(async () => {
  const server = await fx.server()
  const dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-open-'))
  const file = join(dir, 'tokens.json')
  await writeFile(file, JSON.stringify({ tokens: [all.entry, ace.entry] }))
  // The gateway is the first fastify the service makes; the documents' own, made later, are not it.
  let gateway: FastifyInstance | undefined
  const onInit = (message: unknown): void => {
    if (gateway !== undefined) return
    gateway = (message as { fastify: FastifyInstance }).fastify
    gateway.addHook('onRoute', (route) => { routes.push(route) })
  }
  subscribe('fastify.initialization', onInit)
  try {
    running = await fx.service(server, { HTTP_TOKENS_FILE: file })
  } finally {
    unsubscribe('fastify.initialization', onInit)
  }
  await untilReady(running)
})

/** The GET routes, but the CORS preflight's and HEAD twins, which follow their GET route. */
const gets = (): RouteOptions[] => routes.filter((route) => route.method === 'GET')

test('the routes that declare themselves open are exactly the open ones', () => {
  expect(gets().length, 'the routes were seen').toBeGreaterThan(20)
  const open = gets().filter((route) => route.config?.open === true).map((route) => route.url)
  expect(open.sort()).toEqual(OPEN)
})

test('every other route is checked for a token, and says so in its options', () => {
  const unchecked = gets().filter((route) => route.config?.open !== true && route.config?.access === undefined).map((route) => route.url)
  expect(unchecked).toEqual([])
})

test('asked without a token, an open route answers and every other is refused with 401', async () => {
  const statuses: Record<string, boolean> = {}
  const expected: Record<string, boolean> = {}
  for (const route of gets()) {
    // Any value will do for a path parameter: the token is judged before the route reads it.
    const path = route.url.replace(/:[^/]+/g, 'x').replace('*', 'index.html')
    const res = await request(`${running.url}${path}`, { method: 'GET' })
    await res.body.dump()
    statuses[route.url] = res.statusCode === 401
    expected[route.url] = !OPEN.includes(route.url)
  }
  expect(statuses).toEqual(expected)
})

test('every checked route declares what it reads, or reads the nodes\' entries', () => {
  const reads: Record<string, string[]> = {}
  for (const route of gets()) {
    const access = route.config?.access
    if (route.config?.open === true || access === 'reader' || access === undefined) continue
    ;(reads[access] ??= []).push(route.url)
  }
  for (const urls of Object.values(reads)) urls.sort()
  expect(reads).toEqual(READS)
  expect(gets().filter((route) => route.config?.access === 'reader').length, 'the nodes\' routes').toBeGreaterThan(10)
})

test('a token of one node reads every route of the registry as a token of every node does', async () => {
  await vi.waitFor(() => { expect(running.views.status().registry.keys, 'the registry written and seen').toBeGreaterThan(0) }, { timeout: 10_000, interval: 20 })
  const statuses = async (token: string): Promise<Record<string, number>> => {
    const got: Record<string, number> = {}
    for (const url of READS.registry) {
      // The path's kind is one no domain answers: 404 from the route, not 403 from the access check.
      const path = url.replace(':kind', 'no-such-kind').replace(/\/facets$/, '/facets?by=kind')
      const res = await request(`${running.url}${path}`, { method: 'GET', headers: { authorization: `Bearer ${token}` } })
      got[url] = res.statusCode
      // An event stream sends its headers at once and never ends: it is left once they are read.
      res.body.destroy()
    }
    return got
  }
  const expected = { '/v1/registry': 200, '/v1/registry/:kind': 404, '/v1/registry/events': 200, '/v1/registry/facets': 200 }
  expect(await statuses(all.token)).toEqual(expected)
  expect(await statuses(ace.token)).toEqual(expected)
})
