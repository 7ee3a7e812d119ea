// The bench's child processes: compiled once to plain JavaScript (a TypeScript loader in the child
// would add its own thread and ~35 MB to the RSS measured), forked, and spoken to over IPC.

import { fork, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { compileJs } from '../testkit/compile-js.js'
import { NODE_FLAGS, START_ENV } from '../testkit/start-command.js'
import type { FromChild, ToChild } from './serve.js'
import type { BusLoad, BusLoadResult } from './bus-load.js'
import type { HttpLoad, HttpLoadResult } from './http-load.js'

const js = fileURLToPath(new URL('../.bench-tmp/js/', import.meta.url))
const out = join(js, 'bench')

/** Compiles the child scripts and what they import (the service, the test kit) into .bench-tmp. */
export async function compileChildren (): Promise<void> {
  await compileJs(js, ['bench', 'testkit'])
}

type Message = FromChild | BusLoadResult | HttpLoadResult

export class Child {
  private readonly queue: Message[] = []
  private waiter: (() => void) | undefined
  private exitCode: number | null | undefined
  readonly exited: Promise<void>

  private constructor (readonly proc: ChildProcess, readonly name: string) {
    proc.on('message', (m: Message) => { this.queue.push(m); this.waiter?.() })
    this.exited = new Promise((resolve) => proc.once('exit', (code) => { this.exitCode = code; this.waiter?.(); resolve() }))
  }

  static start (script: 'serve' | 'bus-load' | 'http-load', args: string[], env: Record<string, string> = {}): Child {
    // The service runs with the node flags of `npm start`, and every child (the floors as the
    // service) with the environment it sets (MALLOC_ARENA_MAX). BENCH_CPU_PROF=<dir>: every child writes
    // a CPU profile there when it ends. BENCH_NODE_ARGS: more flags for every child (`--trace-gc`,
    // which NODE_OPTIONS refuses); BENCH_SERVICE_ARGS: for the service alone (the last of a flag wins).
    const prof = process.env['BENCH_CPU_PROF']
    const words = (name: string): string[] => process.env[name]?.split(' ') ?? []
    const more = [...words('BENCH_NODE_ARGS'), ...(args[0] === 'service' ? [...NODE_FLAGS, ...words('BENCH_SERVICE_ARGS')] : [])].filter((a) => a !== '')
    const execArgv = ['--expose-gc', '--no-deprecation', ...(prof === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${prof}`]), ...more]
    const proc = fork(join(out, `${script}.js`), args, { execArgv, env: { ...process.env, ...START_ENV, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    return new Child(proc, [script, ...args].join(' '))
  }

  /** The child's CPU time so far (µs, user and system), from /proc: Linux counts it in ticks of 10 ms. */
  cpuMicros (): number {
    const fields = readFileSync(`/proc/${this.proc.pid ?? 0}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
    return (Number(fields[11]) + Number(fields[12])) * 10_000
  }

  send (msg: ToChild | BusLoad | HttpLoad): void {
    this.proc.send(msg)
  }

  /** The next message of `type`, or an error when the child exits first. */
  async next<T extends Message['type']> (type: T): Promise<Extract<Message, { type: T }>> {
    for (;;) {
      const i = this.queue.findIndex((m) => m.type === type)
      if (i >= 0) return this.queue.splice(i, 1)[0] as Extract<Message, { type: T }>
      if (this.exitCode !== undefined) throw new Error(`${this.name} exited (${this.exitCode}) before sending ${type}`)
      await new Promise<void>((resolve) => { this.waiter = resolve })
    }
  }

  async stop (): Promise<void> {
    if (this.exitCode !== undefined) return
    if (this.proc.connected) this.send({ type: 'stop' })
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10_000)
    await this.exited
    clearTimeout(timer)
  }
}

/** One HTTP load run over many paths from its own process. */
export async function httpLoadOf (job: HttpLoad): Promise<HttpLoadResult> {
  const child = Child.start('http-load', [])
  child.send(job)
  try {
    return await child.next('http-load')
  } finally {
    await child.exited
  }
}

/** One bus load run from its own process. */
export async function busLoad (env: Record<string, string>, job: BusLoad): Promise<BusLoadResult> {
  const child = Child.start('bus-load', [], env)
  child.send(job)
  try {
    return await child.next('bus-load')
  } finally {
    await child.exited
  }
}
