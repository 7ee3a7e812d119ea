// The order the suite's files start in (vitest.config.ts): the longest first, so that none of them
// starts last and runs on alone while the other workers have nothing left. Left to itself, vitest
// runs one project's files before the other's, and orders them by the durations of the run before
// (a fresh checkout has none: by size, where the bench's smoke test, among the longest, is among the
// smallest files and started last).
//
// A worker goes on to the next file only when that file is of its own project; otherwise it ends
// and a new one starts, importing the service's modules anew (~3 s of CPU). So the projects are not
// interleaved: the first of LONGEST starts first, then every file of the other project (nats-2.9),
// longest first, on the other workers, then the rest of the first's project.

import { relative } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * The files that take longest in the suite, longest first; a file the list leaves out comes after
 * them, in vitest's own order. Three files share two cores there, so a file's CPU counts more than
 * its waits: ~2 s of the suite's for a second of a file's own CPU (figures alone, quiet machine).
 */
export const LONGEST = [
  'test/bench-smoke.test.ts', // ~30 s, ~36 s of CPU: one run of every row of the bench, in turn
  'test/access-process.test.ts', // ~12 s, ~17 s of CPU: eleven processes of the service or its scripts
  'test/demo.test.ts', // ~11 s, ~13 s of CPU: four demos side by side
  'test/container.test.ts', // ~9 s, ~9 s of CPU: npm run build, then the built entrypoint started three times
  'test/cluster.test.ts', // ~18 s, ~4 s of CPU: three servers, one killed and restarted twice
  'test/main.test.ts', // ~10 s, ~12 s of CPU
  'test/nats-defects.test.ts', // ~6 s, ~8 s of CPU a server
  'test/soak.test.ts', // ~10 s, ~8 s of CPU a server
  'test/faults.test.ts', // ~15 s, ~4 s of CPU a server: killed and restarted
  'test/scripts.test.ts',
  'test/rolling-restart.test.ts',
  'test/browser-auth.test.ts', // ~10 s, as browser: Chromium and the Swagger page
  'test/browser.test.ts',
  'test/prometheus.test.ts', // ~13 s: Prometheus scraping the service
  'test/distinct-requests.test.ts',
  'test/page-browser.test.ts',
  'test/events-faults.test.ts',
  'test/answer-revision.test.ts'
]

export class LongestFirst extends BaseSequencer {
  override async sort (files: TestSpecification[]): Promise<TestSpecification[]> {
    const path = (spec: TestSpecification): string => relative(spec.project.config.root, spec.moduleId)
    const rank = (spec: TestSpecification): number => {
      const at = LONGEST.indexOf(path(spec))
      return at === -1 ? LONGEST.length : at
    }
    const sorted = (await super.sort(files)).sort((a, b) => rank(a) - rank(b))
    const lead = sorted[0]
    // 0: the longest file; 1: the other project's files; 2: the rest of the longest's project.
    const group = (spec: TestSpecification): number => spec === lead ? 0 : spec.project.name !== lead?.project.name ? 1 : 2
    // Array sort is stable: within a group, longest first, then vitest's order.
    return sorted.sort((a, b) => group(a) - group(b))
  }
}
