// Counters and a histogram counted in plain numbers as things happen and read by prom-client's
// registry at scrape time, for the series counted on every request and every event. prom-client's
// own inc and observe check and hash the labels at every call: ~1 µs on the bench's machine, ~4 %
// of a cached HTTP answer's CPU, and 8 % of an event stream's fan-out, one inc an event
// (bench/RESULTS.md). These take ~50 ns. The exposition is prom-client's, and a test holds it to
// what prom-client's Counter and Histogram write for the same calls (plain-metrics.test.ts).

import type { Metric, Registry } from 'prom-client'

/** One sample as prom-client's metrics give theirs. */
interface Value { value: number, labels: Record<string, string | number>, metricName?: string }

/** The labels of one series, by name. */
type Labels = Record<string, string>

/** What the registry reads of a metric: prom-client's metric classes hold these too. */
interface Exposed {
  name: string
  help: string
  type: 'counter' | 'histogram'
  aggregator: 'sum'
  get: () => Promise<{ name: string, help: string, type: 'counter' | 'histogram', aggregator: 'sum', values: Value[] }>
  reset: () => void
}

export interface PlainMetricOptions {
  name: string
  help: string
  labelNames: readonly string[]
}

/**
 * Series by their label values, made at their first call. The callers bound them: each label's
 * values come from the code (a route's pattern, an outcome, an event's type), never from a request.
 */
class Series<T> {
  private readonly byKey = new Map<string, { labels: Labels, value: T }>()
  /**
   * The series asked last, by its values: a run of requests to one route, or of events of one
   * type, finds it by comparing them, with no key joined and hashed (~0.6 µs a request).
   */
  private last: { values: readonly string[], value: T } | undefined

  constructor (private readonly labelNames: readonly string[], private readonly make: () => T) {}

  of (values: readonly string[]): T {
    const last = this.last
    if (last !== undefined && sameValues(last.values, values)) return last.value
    const key = values.join('\n')
    let series = this.byKey.get(key)
    if (series === undefined) {
      const labels: Labels = {}
      this.labelNames.forEach((name, i) => { labels[name] = values[i] as string })
      this.byKey.set(key, (series = { labels, value: this.make() }))
    }
    this.last = { values, value: series.value }
    return series.value
  }

  entries (): Iterable<{ labels: Labels, value: T }> {
    return this.byKey.values()
  }

  clear (): void {
    this.byKey.clear()
    this.last = undefined
  }
}

function sameValues (a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** Registers a metric of `type` read from `values()`: the registry reads a metric through Exposed's members alone (prom-client's Metric type is its classes, hence the cast). */
function register (registry: Registry, type: Exposed['type'], { name, help }: PlainMetricOptions, values: () => Value[], reset: () => void): void {
  const exposed: Exposed = { name, help, type, aggregator: 'sum', get: async () => ({ name, help, type, aggregator: 'sum', values: values() }), reset }
  registry.registerMetric(exposed as unknown as Metric)
}

/** A counter: `inc` with the label values in the order of `labelNames`. */
export class PlainCounter {
  private readonly series: Series<{ n: number }>

  constructor (registry: Registry, options: PlainMetricOptions) {
    this.series = new Series(options.labelNames, () => ({ n: 0 }))
    register(registry, 'counter', options, () => [...this.series.entries()].map(({ labels, value }) => ({ value: value.n, labels })), () => { this.series.clear() })
  }

  inc (...values: string[]): void {
    this.series.of(values).n++
  }
}

/** A histogram of `buckets` (each counts what is at most its bound): `observe` with the label values and the value. */
export class PlainHistogram {
  private readonly series: Series<{ buckets: number[], sum: number, count: number }>

  constructor (registry: Registry, private readonly options: PlainMetricOptions & { buckets: readonly number[] }) {
    // Per bucket, the values that fell in it, not yet summed up: the last one is +Inf.
    this.series = new Series(options.labelNames, () => ({ buckets: new Array<number>(options.buckets.length + 1).fill(0), sum: 0, count: 0 }))
    register(registry, 'histogram', options, () => [...this.series.entries()].flatMap(({ labels, value }) => this.values(labels, value)), () => { this.series.clear() })
  }

  observe (values: readonly string[], observed: number): void {
    const series = this.series.of(values)
    const bounds = this.options.buckets
    let b = 0
    while (b < bounds.length && observed > (bounds[b] as number)) b++
    series.buckets[b] = (series.buckets[b] as number) + 1
    series.sum += observed
    series.count++
  }

  /** One series as prom-client's Histogram writes it: cumulative buckets, +Inf, the sum and the count. */
  private values (labels: Labels, { buckets, sum, count }: { buckets: number[], sum: number, count: number }): Value[] {
    const name = this.options.name
    let acc = 0
    const values: Value[] = this.options.buckets.map((le, b) => {
      acc += buckets[b] as number
      return { value: acc, labels: { le, ...labels }, metricName: `${name}_bucket` }
    })
    values.push(
      { value: count, labels: { le: '+Inf', ...labels }, metricName: `${name}_bucket` },
      { value: sum, labels: { ...labels }, metricName: `${name}_sum` },
      { value: count, labels: { ...labels }, metricName: `${name}_count` }
    )
    return values
  }
}
