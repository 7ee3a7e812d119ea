// The service as an operator runs it: `src/main.ts` in a child process of its own, its output kept.

import { spawn, type ChildProcess } from 'node:child_process'

/**
 * Starts the service with only `env` (and PATH), on a free HTTP port unless `env` says otherwise;
 * `fileLimit` sets its open file limit, soft and hard (util-linux's prlimit), as `ulimit -n` would.
 */
export function runMain (env: Record<string, string>, { fileLimit }: { fileLimit?: number } = {}): { proc: ChildProcess, out: () => string } {
  let out = ''
  const node = [process.execPath, '--import', 'tsx', 'src/main.ts']
  const [command, ...args] = fileLimit === undefined ? node : ['prlimit', `--nofile=${fileLimit}:${fileLimit}`, '--', ...node]
  const proc = spawn(command as string, args, {
    env: { PATH: process.env['PATH'] ?? '', HTTP_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  proc.stdout?.on('data', (d: Buffer) => { out += d.toString() })
  proc.stderr?.on('data', (d: Buffer) => { out += d.toString() })
  return { proc, out: () => out }
}
