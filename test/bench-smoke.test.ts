// The bench is not a test (its goals depend on the machine), but a tiny run of it is, so that it
// cannot rot: every row of the table must print, measured, whatever the figures.

import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, test } from 'vitest'
import { has } from './support/tools.js'

const root = fileURLToPath(new URL('..', import.meta.url))

describe('npm run bench', () => {
  test('prints every row of the table in a tiny run', async () => {
    // Load runs of a fraction of a second (autocannon and h2load too: bench/measure.ts loadSampleMs):
    // the smoke proves every row is measured, not what the figures are.
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--small', '--keys', '500,1500', '--huge', '6000', '--seconds', '0.3', '--rounds', '1'], { cwd: root, timeout: 190_000 })
    const rows = stdout.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| what '))
    const starts = ['HTTP:', 'CPU a request, HTTP', 'bus:', 'CPU a request, bus', 'one need over HTTP', 'HTTP/2 with TLS', 'HTTP, distinct questions',
      'cold start to ready', 'distinct questions at', 'since:', 'put → visible', 'event streams:', 'memory per open idle event stream', 'event streams on distinct filters',
      'live rows', 'held waits, memory', 'held waits, wake', 'overview after one need changes', 'sweep:', 'during the sweep:', 'during the sweep, a console question',
      'memory after a sweep', 'bytes held per entry', 'RSS with empty buckets',
      'cold start to ready', 'cold start to ready', 'bytes held per entry', 'bytes held per entry', 'distinct questions at', 'overview at']
    expect(rows.map((r) => starts.find((s) => r.startsWith(`| ${s}`)))).toEqual(starts)
    // Without h2load (test/global-setup.ts said so) the HTTP/2 row says why it is not measured.
    const unmeasurable = has('h2load') ? [] : rows.filter((r) => r.startsWith('| HTTP/2 with TLS') && /not measured: h2load is not installed/.test(r))
    for (const row of rows.filter((r) => !unmeasurable.includes(r))) expect(row, row).not.toMatch(/not measured/)
  }, 200_000)
})
