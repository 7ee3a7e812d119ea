// Debian's prometheus package (the server and promtool), unpacked by scripts/fetch-prometheus.sh
// into PROMETHEUS_DIR (default .cache/prometheus): absent locally, its suites are skipped; in CI
// (.ci/run fetches it) it is required.

import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const PROMETHEUS_DIR = process.env['PROMETHEUS_DIR'] ?? join(ROOT, '.cache/prometheus')
export const PROMTOOL = join(PROMETHEUS_DIR, 'usr/bin/promtool')
export const PROMETHEUS = join(PROMETHEUS_DIR, 'usr/bin/prometheus')

export const prometheusPresent = existsSync(PROMTOOL) && existsSync(PROMETHEUS)
if (!prometheusPresent && process.env['CI'] !== undefined) throw new Error(`${PROMTOOL} is missing; CI fetches Debian's prometheus package with scripts/fetch-prometheus.sh (.ci/run)`)

export interface ToolRun { code: number, stdout: string, stderr: string }

/** Runs promtool with `args` (and `input` on its stdin); its exit code is part of the answer, not a throw. */
export async function promtool (args: string[], input?: string): Promise<ToolRun> {
  const child = promisify(execFile)(PROMTOOL, args, { cwd: ROOT, timeout: 30_000 })
  if (input !== undefined) child.child.stdin?.end(input)
  return await child.then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code?: number, stdout?: string, stderr?: string }) => ({ code: err.code ?? -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' })
  )
}
