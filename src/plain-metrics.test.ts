// The plain counter and histogram write what prom-client's own Counter and Histogram write for the
// same calls: the exposition a scrape reads, line for line (label order aside).

import fc from 'fast-check'
import { Counter, Histogram, Registry } from 'prom-client'
import { expect, test } from 'vitest'
import { PlainCounter, PlainHistogram } from './plain-metrics.js'

const BUCKETS = [0.0001, 0.001, 0.01, 0.1]
const COUNTER = { name: 'r_total', help: 'Requests.' }
const HISTOGRAM = { name: 'r_seconds', help: 'Latency.' }

/** The exposition's lines, each sample's labels sorted by name, so that only their order may differ. */
async function exposition (registry: Registry): Promise<string[]> {
  const text = await registry.metrics()
  return text.split('\n').filter((l) => l !== '').map((line) => line.replace(/\{([^}]*)\}/, (_all, labels: string) => `{${labels.split(/,(?=\w+=")/).sort().join(',')}}`)).sort()
}

test('the counts by outcome and the latency buckets, sum and count are prom-client\'s own', async () => {
  const request = fc.record({
    face: fc.constantFrom('bus', 'http'),
    route: fc.constantFrom('/v1/needs', '/v1/nodes', 'needs'),
    outcome: fc.constantFrom('ok', 'not_modified', 'BAD_REQUEST'),
    // Values on a bound too: a bucket counts what is at most its bound.
    seconds: fc.oneof(fc.constantFrom(...BUCKETS, 0, 2), fc.double({ min: 0, max: 2, noNaN: true }))
  })
  await fc.assert(fc.asyncProperty(fc.array(request, { maxLength: 40 }), async (requests) => {
    const theirs = new Registry()
    const counter = new Counter({ ...COUNTER, labelNames: ['face', 'route', 'outcome'], registers: [theirs] })
    const histogram = new Histogram({ ...HISTOGRAM, labelNames: ['face', 'route'], buckets: BUCKETS, registers: [theirs] })
    const ours = new Registry()
    const plainCounter = new PlainCounter(ours, { ...COUNTER, labelNames: ['face', 'route', 'outcome'] })
    const plainHistogram = new PlainHistogram(ours, { ...HISTOGRAM, labelNames: ['face', 'route'], buckets: BUCKETS })
    for (const { face, route, outcome, seconds } of requests) {
      counter.inc({ face, route, outcome })
      histogram.observe({ face, route }, seconds)
      plainCounter.inc(face, route, outcome)
      plainHistogram.observe([face, route], seconds)
    }
    expect(await exposition(ours)).toEqual(await exposition(theirs))
  }))
})

test('a registry reset clears the counts, as it does prom-client\'s', async () => {
  const registry = new Registry()
  const counter = new PlainCounter(registry, { ...COUNTER, labelNames: ['face', 'route', 'outcome'] })
  const histogram = new PlainHistogram(registry, { ...HISTOGRAM, labelNames: ['face', 'route'], buckets: BUCKETS })
  counter.inc('http', '/v1/needs', 'ok')
  histogram.observe(['http', '/v1/needs'], 0.002)
  expect(await registry.metrics()).toMatch(/^r_total\{face="http",route="\/v1\/needs",outcome="ok"\} 1$/m)
  expect(await registry.metrics()).toMatch(/^r_seconds_count\{face="http",route="\/v1\/needs"\} 1$/m)
  registry.resetMetrics()
  expect(await registry.metrics()).not.toMatch(/^r_(total|seconds_count)\{/m)
  // The series asked last before the reset is counted anew after it.
  counter.inc('http', '/v1/needs', 'ok')
  histogram.observe(['http', '/v1/needs'], 0.002)
  expect(await registry.metrics()).toMatch(/^r_total\{face="http",route="\/v1\/needs",outcome="ok"\} 1$/m)
  expect(await registry.metrics()).toMatch(/^r_seconds_count\{face="http",route="\/v1\/needs"\} 1$/m)
})
