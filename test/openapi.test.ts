// The OpenAPI document: the committed file is what the code generates, every route of docs/http.md is
// there, every parameter and response is described, and every example fits the domain's schema.

import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import { describe, expect, test } from 'vitest'
import { Answers, EntrySchemas, Facets, ModuleRow, ModulesAnswer, NodeRow, NodesAnswer, RequestFields } from '../src/domain/wire/schemas.js'
import { openApiText } from '../src/http/openapi-document.js'
import { parseCursor } from '../src/domain/wire/cursor.js'
import { ErrorBody } from '../src/http/schemas.js'
import { SseParser } from './support/sse.js'
import { readWait } from '../src/http/wait.js'
import { VERSION } from '../src/version.js'

interface Parameter { name: string, in: string, description?: string, example?: unknown, schema: { examples?: unknown[] } }
interface Response { description?: string, headers?: Record<string, unknown>, content?: Record<string, { schema: { $ref?: string }, example?: unknown }> }
interface Operation { tags?: string[], summary?: string, description?: string, operationId?: string, parameters?: Parameter[], responses: Record<string, Response> }
interface Document { openapi: string, info: { version: string }, paths: Record<string, Record<string, Operation>>, components: { schemas: Record<string, object> } }

const generated = await openApiText(VERSION)
const doc = JSON.parse(generated) as Document
const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as const))

/** The domain schema each component stands for: examples are checked against the source of truth. */
const SOURCES: Record<string, TSchema> = {
  '#/components/schemas/RegistryAnswer': Answers.registry,
  '#/components/schemas/NeedsAnswer': Answers.needs,
  '#/components/schemas/AppliedAnswer': Answers.applied,
  '#/components/schemas/CollectAnswer': Answers.collect,
  '#/components/schemas/RegistryEntry': EntrySchemas.registry,
  '#/components/schemas/NeedsEntry': EntrySchemas.needs,
  '#/components/schemas/AppliedEntry': EntrySchemas.applied,
  '#/components/schemas/CollectEntry': EntrySchemas.collect,
  '#/components/schemas/RegistryFacets': Facets.registry,
  '#/components/schemas/NeedsFacets': Facets.needs,
  '#/components/schemas/AppliedFacets': Facets.applied,
  '#/components/schemas/CollectFacets': Facets.collect,
  '#/components/schemas/NodesAnswer': NodesAnswer,
  '#/components/schemas/ModulesAnswer': ModulesAnswer,
  '#/components/schemas/NodeRow': NodeRow,
  '#/components/schemas/ModuleRow': ModuleRow,
  '#/components/schemas/ErrorBody': ErrorBody
}

/** The answer each data route documents for 200: its own domain's, not merely some component. */
const ANSWERS: Record<string, string> = {
  'GET /v1/registry': '#/components/schemas/RegistryAnswer',
  'GET /v1/needs': '#/components/schemas/NeedsAnswer',
  'GET /v1/applied': '#/components/schemas/AppliedAnswer',
  'GET /v1/collect': '#/components/schemas/CollectAnswer',
  'GET /v1/registry/{kind}': '#/components/schemas/RegistryEntry',
  'GET /v1/needs/{node}/{module}/{kind}/{name}': '#/components/schemas/NeedsEntry',
  'GET /v1/applied/{node}/{module}': '#/components/schemas/AppliedEntry',
  'GET /v1/collect/{node}/{collection}/{contributor}': '#/components/schemas/CollectEntry',
  'GET /v1/registry/facets': '#/components/schemas/RegistryFacets',
  'GET /v1/needs/facets': '#/components/schemas/NeedsFacets',
  'GET /v1/applied/facets': '#/components/schemas/AppliedFacets',
  'GET /v1/collect/facets': '#/components/schemas/CollectFacets',
  'GET /v1/nodes': '#/components/schemas/NodesAnswer',
  'GET /v1/modules': '#/components/schemas/ModulesAnswer',
  'GET /v1/nodes/{node}': '#/components/schemas/NodeRow',
  'GET /v1/modules/{node}/{module}': '#/components/schemas/ModuleRow'
}

describe('the OpenAPI document', () => {
  test('is committed as the code generates it (run `npm run openapi` after changing a route)', async () => {
    const committed = await readFile(new URL('../openapi/openapi.json', import.meta.url), 'utf8')
    expect(committed).toBe(generated)
  })

  test('is generated the same way twice', async () => {
    expect(await openApiText(VERSION)).toBe(generated)
  })

  test('is OpenAPI 3.1 with every route of docs/http.md, and only GET', () => {
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.info.version).toBe(VERSION)
    expect(operations.map(([name]) => name).sort()).toEqual([
      'GET /healthz', 'GET /metrics', 'GET /readyz',
      'GET /v1/applied', 'GET /v1/applied/events', 'GET /v1/applied/facets', 'GET /v1/applied/{node}/{module}',
      'GET /v1/collect', 'GET /v1/collect/events', 'GET /v1/collect/facets', 'GET /v1/collect/{node}/{collection}/{contributor}',
      'GET /v1/modules', 'GET /v1/modules/events', 'GET /v1/modules/{node}/{module}',
      'GET /v1/needs', 'GET /v1/needs/events', 'GET /v1/needs/facets', 'GET /v1/needs/{node}/{module}/{kind}/{name}',
      'GET /v1/nodes', 'GET /v1/nodes/events', 'GET /v1/nodes/{node}',
      'GET /v1/registry', 'GET /v1/registry/events', 'GET /v1/registry/facets', 'GET /v1/registry/{kind}',
      'GET /v1/token/self'
    ])
  })

  test('takes on each list route exactly the fields that narrow its request, then after and limit', () => {
    const names = (path: string) => doc.paths[path]?.['get']?.parameters?.map((p) => `${p.in}:${p.name}`)
    expect(names('/v1/registry')).toEqual(['query:kind', 'query:after', 'query:limit', 'query:since', 'query:wait'])
    expect(names('/v1/needs')).toEqual(['query:node', 'query:module', 'query:kind', 'query:name', 'query:after', 'query:limit', 'query:since', 'query:wait'])
    expect(names('/v1/applied')).toEqual(['query:node', 'query:module', 'query:after', 'query:limit', 'query:since', 'query:wait'])
    expect(names('/v1/collect')).toEqual(['query:node', 'query:module', 'query:contributor', 'query:collection', 'query:after', 'query:limit', 'query:since', 'query:wait'])
    // A one-entry route takes wait (with If-None-Match) beside its path.
    expect(names('/v1/registry/{kind}')).toEqual(['query:wait', 'path:kind'])
    expect(names('/v1/needs/{node}/{module}/{kind}/{name}')).toEqual(['query:wait', 'path:node', 'path:module', 'path:kind', 'path:name'])
    expect(names('/v1/applied/{node}/{module}')).toEqual(['query:wait', 'path:node', 'path:module'])
    expect(names('/v1/collect/{node}/{collection}/{contributor}')).toEqual(['query:wait', 'path:node', 'path:collection', 'path:contributor'])
    const limit = doc.paths['/v1/needs']?.['get']?.parameters?.find((p) => p.name === 'limit')
    expect(limit?.schema).toEqual({ type: 'integer', minimum: 1, maximum: 10000, default: 1000, examples: [100] })
  })

  test.each(operations)('%s is tagged, summarised and described, and every parameter is described with a fitting example', (_name, op) => {
    expect(op.tags?.length).toBe(1)
    expect(op.summary).toMatch(/\w/)
    expect(op.description).toMatch(/\w/)
    expect(op.operationId).toMatch(/^\w+$/)
    for (const p of op.parameters ?? []) {
      expect(p.description, p.name).toMatch(/\w/)
      // Optional query parameters show their example in the schema: Swagger UI would fill in `example`.
      const example = p.in === 'query' ? p.schema.examples?.[0] : p.example
      if (p.in === 'query') expect(p.example).toBeUndefined()
      // `wait`, `lastEventId` and `access_token` are HTTP's own; every other parameter is a field of the verb's request.
      if (p.name === 'wait') expect(readWait(example)).toBeGreaterThan(0)
      else if (p.name === 'lastEventId') expect(parseCursor(example as string, 'lastEventId').revision).toBeGreaterThan(0)
      else if (p.name === 'access_token') expect(example).toMatch(/\w/)
      else expect(Compile(RequestFields[p.name as keyof typeof RequestFields]).Check(example), `${p.name} example ${JSON.stringify(example)}`).toBe(true)
    }
  })

  test('GET /v1/token/self documents the token and 401, and no 403: every token reads itself', () => {
    const op = doc.paths['/v1/token/self']?.['get']
    expect(Object.keys(op?.responses ?? {}).sort()).toEqual(['200', '400', '401'])
    expect(op?.responses['200']?.content?.['application/json']?.schema.$ref).toBe('#/components/schemas/TokenSelf')
    expect((op as { security?: unknown } | undefined)?.security).toEqual([{ bearer: [] }])
  })

  test.each(operations.filter(([name]) => name.includes('/v1/') && !name.endsWith('/events') && !name.endsWith('/token/self')))('%s documents its answer and its refusals, each with an example that fits the schema', (name, op) => {
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '304', '400', '500', '503', ...(name.includes('{') ? ['404'] : [])]))
    for (const [status, response] of Object.entries(op.responses)) {
      expect(response.description, status).toMatch(/\w/)
      if (status === '304') continue
      const media = response.content?.['application/json']
      const ref = media?.schema.$ref as string
      expect(ref, status).toBe(status === '200' ? ANSWERS[name] : '#/components/schemas/ErrorBody')
      const source = SOURCES[ref]
      expect(source, ref).toBeDefined()
      expect(Compile(source as TSchema).Check(media?.example), `${status} example`).toBe(true)
    }
  })

  test('passes Redocly\'s recommended rules without an error or a warning', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-openapi-'))
    try {
      const file = join(dir, 'openapi.json')
      await writeFile(file, generated)
      const redocly = new URL('../node_modules/.bin/redocly', import.meta.url).pathname
      // Offline: no telemetry, no update check. A finding makes it exit 1: the report is read either way.
      const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }
      const run = promisify(execFile)(redocly, ['lint', '--extends=recommended', '--format=json', file], { env })
      const { stdout } = await run.catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }))
      const report = JSON.parse(stdout) as { totals: Record<string, number>, problems: Array<{ ruleId: string, message: string }> }
      expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([])
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, 60_000)

  test.each(operations.filter(([name]) => name.endsWith('/events')))('%s documents its event stream, every event type, and its refusals', (name, op) => {
    const what = name.split('/')[2] as string
    const list = doc.paths[`/v1/${what}`]?.['get']?.parameters?.map((p) => p.name).filter((n) => !['after', 'limit', 'since', 'wait'].includes(n))
    expect(op.parameters?.map((p) => `${p.in}:${p.name}`)).toEqual([...(list ?? []), 'lastEventId', 'access_token'].map((n) => `query:${n}`))
    expect(Object.keys(op.responses)).toEqual(['200', '400', '401', ...(what === 'registry' ? [] : ['403']), '500', '503'])
    const stream = op.responses['200']?.content?.['text/event-stream']
    expect(stream).toBeDefined()
    // The live rows have no out-of-shape keys: a node named only by them has a row.
    const types = ['nodes', 'modules'].includes(what) ? ['put', 'synced', 'delete', 'stale', 'live', 'reset'] : ['put', 'outOfShape', 'synced', 'delete', 'stale', 'live', 'reset']
    for (const type of types) expect(op.responses['200']?.description).toContain(`\`${type}\`:`)
    if (types.length === 6) expect(op.responses['200']?.description).not.toContain('`outOfShape`:')
    // The example is a stream a client reads: its events are JSON.
    const parser = new SseParser()
    parser.feed(stream?.example as string)
    expect(parser.events.map((e) => e.event)).toEqual(['put', 'synced', 'delete'])
    for (const e of parser.events) expect(() => JSON.parse(e.data) as unknown).not.toThrow()
    expect(op.responses['503']?.headers?.['Retry-After']).toBeDefined()
    for (const status of ['400', '401', '500', '503']) {
      const media = op.responses[status]?.content?.['application/json']
      expect(media?.schema.$ref, status).toBe('#/components/schemas/ErrorBody')
      expect(Compile(ErrorBody).Check(media?.example), `${status} example`).toBe(true)
    }
  })

  test('describes every property of every component schema', () => {
    const undescribed: string[] = []
    const walk = (schema: Record<string, unknown>, at: string): void => {
      for (const [name, prop] of Object.entries((schema['properties'] ?? {}) as Record<string, Record<string, unknown>>)) {
        if (typeof prop['description'] !== 'string' && typeof prop['$ref'] !== 'string') undescribed.push(`${at}.${name}`)
        walk(prop, `${at}.${name}`)
        if (prop['items'] !== undefined) walk(prop['items'] as Record<string, unknown>, `${at}.${name}[]`)
      }
    }
    for (const [name, schema] of Object.entries(doc.components.schemas)) walk(schema as Record<string, unknown>, name)
    // The domain's ErrorBody leaves its `error` object undescribed (src/domain/wire/schemas.ts, not the gateway's).
    expect(undescribed).toEqual([])
  })
})
