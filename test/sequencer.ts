// The order the suite's files start in (vitest.config.ts): the longest first, on either server, so
// that none of them starts last and runs on alone while the other workers have nothing left. Left to
// itself, vitest runs one project's files before the other's, and orders them by the durations of the
// run before (a fresh checkout has none: by size, where the bench's smoke test, among the longest,
// is among the smallest files and started last).

import { relative } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * The files that take longest (seconds alone on two cores, busy beside other work), longest first;
 * a file the list leaves out comes after them, in vitest's own order.
 */
export const LONGEST = [
  'test/bench-smoke.test.ts', // ~34 s: one run of every row of the bench, in turn
  'test/cluster.test.ts', // ~26 s: three servers, one killed and restarted twice
  'test/browser.test.ts', // ~25 s, as browser-auth: Chromium and the Swagger page
  'test/browser-auth.test.ts',
  'test/rolling-restart.test.ts', // 8-34 s: a 60k-key mesh written, three services loading it
  'test/container.test.ts', // ~20 s: npm run build, then the built entrypoint started three times
  'test/nats-defects.test.ts', // 8-18 s: 9000 keys of 2 KB and 6000 updates, a purge among bursts
  'test/demo.test.ts', // ~17 s: four demos side by side
  'test/faults.test.ts', // 14-17 s a server
  'test/prometheus.test.ts', // ~17 s: Prometheus scraping the service
  'test/access-process.test.ts', // ~16 s: starts refused, then HTTPS with SIGHUP
  'test/events-faults.test.ts',
  'test/distinct-questions.test.ts',
  'test/answer-revision.test.ts',
  'test/main.test.ts',
  'test/least-privilege.test.ts',
  'test/openapi.test.ts',
  'test/soak.test.ts' // ~10 s a server
]

export class LongestFirst extends BaseSequencer {
  override async sort (files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification): number => {
      const at = LONGEST.indexOf(relative(spec.project.config.root, spec.moduleId))
      return at === -1 ? LONGEST.length : at
    }
    // Array sort is stable: vitest's order stays among files of the same rank.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b))
  }
}
