// A fault inside the domain is still answered on the bus: 500 in the micro error headers, the
// error body, logged once and counted; the verb goes on answering.

import { pino } from 'pino'
import { beforeAll, expect, test } from 'vitest'
import type { NatsConnection } from 'nats'
import { startBus, type Bus } from '../src/bus/service.js'
import { Answer, type Provisioning } from '../src/domain/answers/provisioning.js'
import type { BucketRequest } from '../src/domain/wire/request.js'
import type { Views } from '../src/domain/follow/views.js'
import { createMetrics } from '../src/metrics.js'
import { suiteFixture } from './support/service.js'
import { askVerb } from './support/verb.js'

const fx = suiteFixture()
let nc: NatsConnection
let bus: Bus
const lines: string[] = []
const metrics = createMetrics(() => ({ status: () => ({}), connected: () => true }) as unknown as Views, false)

beforeAll(async () => {
  nc = await fx.admin(await fx.server())
  let calls = 0
  const flaky = {
    keep: (request: BucketRequest) => ({
      request,
      answer: () => {
        if (++calls === 1) throw new Error('view index broken')
        return new Answer('{"what":"registry","bucket":"mesh-provisioner_registry","revision":0,"total":0,"stale":false,"entries":[],"outOfShape":[],"cursor":"0-1"}', 'v')
      }
    })
  } as unknown as Provisioning
  const log = pino({ level: 'error' }, { write: (line: string) => { lines.push(line) } })
  bus = await startBus({ nc, provisioning: flaky, subject: 'mesh-provisioner.provisioning', version: '0.0.0-test', log, metrics })
  fx.defer(async () => await bus.stop())
})

test('answers 500 with the error body, logs and counts it, and answers the next request', async () => {
  const failed = await askVerb(nc, { what: 'registry' })
  expect(failed.code).toBe(500)
  expect(failed.error).toBe('the service failed to answer: view index broken; the fault is logged, ask again or report it')
  expect(failed.body).toEqual({ error: { code: 'INTERNAL', message: failed.error } })
  expect(lines).toHaveLength(1)
  expect(JSON.parse(lines[0] as string)).toMatchObject({ msg: 'the verb failed to answer', err: { message: 'view index broken' } })
  expect(await metrics.registry.getSingleMetricAsString('mesh_provisioner_requests_total')).toContain('mesh_provisioner_requests_total{face="bus",route="registry",outcome="INTERNAL"} 1')
  expect(await askVerb(nc, { what: 'registry' })).toMatchObject({ code: 200, body: { what: 'registry' } })
})
