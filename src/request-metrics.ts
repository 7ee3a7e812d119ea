// The requests each face answered, counted in plain numbers as they are answered and read by
// prom-client's registry at scrape time. prom-client's own inc and observe check and hash the labels
// at every call: 1.3–1.9 µs a request on the bench's machine, ~4 % of a cached HTTP answer's CPU
// and more of the bus's (bench/RESULTS.md). The exposition is prom-client's, and a test holds it to
// what prom-client's Counter and Histogram write for the same requests (request-metrics.test.ts).

import type { Metric, Registry } from 'prom-client'

/** The labels of one series of the latency: a face and its route (or what was asked). */
interface Route { face: string, route: string }

/** One face's route: its answers by outcome, and their latencies in the histogram's buckets. */
interface Series {
  labels: Route
  outcomes: Map<string, number>
  /** Per bucket, the answers that fell in it (not yet summed up): the last one is +Inf. */
  buckets: number[]
  sum: number
  count: number
}

/** One sample as prom-client's metrics give theirs. */
interface Value { value: number, labels: Record<string, string | number>, metricName?: string }

/** What the registry reads of a metric: prom-client's metric classes hold these too. */
interface Exposed {
  name: string
  help: string
  type: 'counter' | 'histogram'
  aggregator: 'sum'
  get: () => Promise<{ name: string, help: string, type: 'counter' | 'histogram', aggregator: 'sum', values: Value[] }>
  reset: () => void
}

export interface RequestMetricsOptions {
  counter: { name: string, help: string }
  histogram: { name: string, help: string, buckets: readonly number[] }
}

/**
 * Requests counted by face, route and outcome, with a latency histogram by face and route. Its
 * series are bounded by the code, not by callers: a route is a route's pattern (or the verb's
 * `what`, or `unmatched`), an outcome `ok`, `not_modified` or an error code.
 */
export class RequestMetrics {
  private readonly byFace = new Map<string, Map<string, Series>>()

  constructor (private readonly options: RequestMetricsOptions) {}

  observe (face: string, route: string, outcome: string, seconds: number): void {
    let byRoute = this.byFace.get(face)
    if (byRoute === undefined) this.byFace.set(face, (byRoute = new Map()))
    let series = byRoute.get(route)
    if (series === undefined) {
      series = { labels: { face, route }, outcomes: new Map(), buckets: new Array<number>(this.options.histogram.buckets.length + 1).fill(0), sum: 0, count: 0 }
      byRoute.set(route, series)
    }
    series.outcomes.set(outcome, (series.outcomes.get(outcome) ?? 0) + 1)
    const bounds = this.options.histogram.buckets
    let b = 0
    while (b < bounds.length && seconds > (bounds[b] as number)) b++
    series.buckets[b] = (series.buckets[b] as number) + 1
    series.sum += seconds
    series.count++
  }

  /** Registers the counter and the histogram in `registry`, read from these counts at every scrape. */
  register (registry: Registry): void {
    const { counter, histogram } = this.options
    const reset = (): void => { this.byFace.clear() }
    const exposed = (type: Exposed['type'], { name, help }: { name: string, help: string }, values: () => Value[]): Exposed =>
      ({ name, help, type, aggregator: 'sum', get: async () => ({ name, help, type, aggregator: 'sum', values: values() }), reset })
    const counted = exposed('counter', counter, () => [...this.all()].flatMap((s) => [...s.outcomes].map(([outcome, value]) => ({ value, labels: { ...s.labels, outcome } }))))
    const timed = exposed('histogram', histogram, () => [...this.all()].flatMap((s) => this.histogramValues(s)))
    // The registry reads a metric through these members alone (prom-client's Metric is its classes).
    registry.registerMetric(counted as unknown as Metric)
    registry.registerMetric(timed as unknown as Metric)
  }

  private * all (): Generator<Series> {
    for (const byRoute of this.byFace.values()) yield * byRoute.values()
  }

  /** One series as prom-client's Histogram writes it: cumulative buckets, +Inf, the sum and the count. */
  private histogramValues (s: Series): Value[] {
    const { name, buckets } = this.options.histogram
    let acc = 0
    const values: Value[] = buckets.map((le, b) => {
      acc += s.buckets[b] as number
      return { value: acc, labels: { le, ...s.labels }, metricName: `${name}_bucket` }
    })
    values.push(
      { value: s.count, labels: { le: '+Inf', ...s.labels }, metricName: `${name}_bucket` },
      { value: s.sum, labels: { ...s.labels }, metricName: `${name}_sum` },
      { value: s.count, labels: { ...s.labels }, metricName: `${name}_count` }
    )
    return values
  }
}
