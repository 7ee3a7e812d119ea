// A fault inside the domain is answered 500 with the error body (never fastify's own shape), logged
// once, and counted with outcome INTERNAL.

import { pino } from 'pino'
import { expect, test } from 'vitest'
import type { Provisioning } from '../src/domain/answers/provisioning.js'
import type { BucketRequest } from '../src/domain/wire/request.js'
import type { Views } from '../src/domain/follow/views.js'
import { buildApp } from '../src/http/app.js'
import { createMetrics } from '../src/metrics.js'
import { checkInjected } from './support/http.js'

test('answers 500 INTERNAL with the error body', async () => {
  const views = { status: () => ({}), connected: () => true } as unknown as Views
  const failing = { keep: (request: BucketRequest) => ({ request, tag: () => '1-c-now', answer: () => { throw new Error('view index broken') } }) } as unknown as Provisioning
  const lines: string[] = []
  const log = pino({ level: 'error' }, { write: (line: string) => { lines.push(line) } })
  const metrics = createMetrics(() => views, false)
  const app = await buildApp({ provisioning: failing, views, writer: { last: undefined }, metrics, log, corsOrigins: [], version: '0.0.0-test', maxAnswerBytes: () => 1 << 20, verb: () => 'serving' })
  try {
    const res = await checkInjected('GET', '/v1/needs?node=ace', await app.inject({ method: 'GET', url: '/v1/needs?node=ace' }))
    expect(res.statusCode).toBe(500)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.body).toBe(JSON.stringify({ error: { code: 'INTERNAL', message: 'the service failed to answer: view index broken; the fault is logged, ask again or report it' } }))
    expect(lines).toHaveLength(1)
    // The request's own logger: the service's, bound to the request's id.
    expect(JSON.parse(lines[0] as string)).toMatchObject({ msg: 'the gateway failed to answer', err: { message: 'view index broken' }, reqId: res.headers['x-request-id'] })
    expect(await metrics.registry.getSingleMetricAsString('mesh_provisioner_requests_total')).toContain('mesh_provisioner_requests_total{face="http",route="/v1/needs",outcome="INTERNAL"} 1')
  } finally {
    await app.close()
  }
})
