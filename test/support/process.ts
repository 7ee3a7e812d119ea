// The service as an operator runs it: `src/main.ts`, compiled, in a child process of its own, its
// output kept; the demo as a user starts it, and the processes it leaves.

import { spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { inject } from 'vitest'

/**
 * The file and env for `node` that run `script` of the working tree (src/main, scripts/token, …) as
 * JavaScript compiled for the run (test/child-js-setup.ts): through tsx a refused start cost 1.7 s
 * of CPU, 1.0 s compiled. NODE_COMPILE_CACHE, shared by the run's processes, spares each start
 * after the first compiling the modules again (another 0.2 s).
 */
export function compiledScript (script: string): { file: string, env: { NODE_COMPILE_CACHE: string } } {
  const js = inject('childJs')
  return { file: join(js, `${script}.js`), env: { NODE_COMPILE_CACHE: join(js, '.compile-cache') } }
}

/**
 * Starts the service with only `env` (and PATH), on a free HTTP port unless `env` says otherwise;
 * `fileLimit` sets its open file limit, soft and hard (util-linux's prlimit), as `ulimit -n` would.
 * Its output is whole at the process's 'close', not its 'exit' (the pipes may still hold the last
 * lines: seen on a busy machine, a refused start's one line read as empty).
 */
export function runMain (env: Record<string, string>, { fileLimit }: { fileLimit?: number } = {}): { proc: ChildProcess, out: () => string } {
  let out = ''
  const main = compiledScript('src/main')
  const node = [process.execPath, main.file]
  const [command, ...args] = fileLimit === undefined ? node : ['prlimit', `--nofile=${fileLimit}:${fileLimit}`, '--', ...node]
  const proc = spawn(command as string, args, {
    env: { PATH: process.env['PATH'] ?? '', HTTP_PORT: '0', ...main.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  proc.stdout?.on('data', (d: Buffer) => { out += d.toString() })
  proc.stderr?.on('data', (d: Buffer) => { out += d.toString() })
  return { proc, out: () => out }
}

/** `npm run demo -- …args` as a user starts it in a shell, on a free HTTP port: npm leads a process group of its own, as a terminal's job does. */
export function runDemo (args: readonly string[] = [], env: Record<string, string> = {}): { proc: ChildProcess, out: () => string } {
  let out = ''
  const { NATS_URL: _, ...inherited } = process.env
  const proc = spawn('npm', ['run', 'demo', '--', ...args], {
    cwd: new URL('../..', import.meta.url),
    env: { ...inherited, HTTP_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true
  })
  proc.stdout?.on('data', (d: Buffer) => { out += d.toString() })
  proc.stderr?.on('data', (d: Buffer) => { out += d.toString() })
  return { proc, out: () => out }
}

/** Every process below `pid`, as /proc tells it now. */
export function descendants (pid: number): number[] {
  const children = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let stat
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue
    }
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)])
  }
  const found: number[] = []
  const walk = (p: number): void => {
    for (const child of children.get(p) ?? []) {
      found.push(child)
      walk(child)
    }
  }
  walk(pid)
  return found
}

/** The command line of a process still there (a zombie, dead but not yet reaped, counts as gone). */
export function commandOf (pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return undefined
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()
  } catch {
    return undefined
  }
}
