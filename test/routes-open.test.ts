// Which routes take no token (docs/access.md): each route says it of itself, in its own module under
// src/http/routes/ (`config: { open: true }`), and no URL pattern decides it. Every route the
// gateway registers is walked as fastify registers it (its onRoute hook, reached through fastify's
// `fastify.initialization` diagnostics channel), so that a route added later is held to the list
// below without anyone remembering to add it here; then each is asked without a token.

import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { beforeAll, expect, test } from 'vitest'
import { newToken } from '../src/settings/tokens-file.js'
import type { Running } from '../src/service.js'
import { request } from './support/http.js'
import { suiteFixture, untilReady } from './support/service.js'

/** The routes anyone may read: the process's health, the documents and the page that shows them. */
const OPEN = ['/', '/asyncapi.json', '/docs', '/docs/*', '/healthz', '/openapi.json', '/page/:file', '/readyz']

const fx = suiteFixture()
const routes: RouteOptions[] = []
let running: Running

beforeAll(async () => {
  const server = await fx.server()
  const dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-open-'))
  const file = join(dir, 'tokens.json')
  await writeFile(file, JSON.stringify({ tokens: [newToken('console', '*', false).entry] }))
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
