// The programs some suites need beyond npm and nats-server. Where one is missing, the suites that
// need it are skipped, and test/global-setup.ts says so in one line a program, naming the package;
// in CI (.ci/run installs every one) a missing program fails the run instead.

import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { PROMETHEUS, PROMTOOL } from './prometheus.js'

export const CHROMIUM = process.env['CHROMIUM_BIN'] ?? '/usr/bin/chromium'
/** Where Debian's golang-github-nats-io-go-nats-dev puts the nats.go sources (GOPATH mode, offline). */
export const GOPATH = '/usr/share/gocode'

const runs = (command: string, args: string[]): boolean => spawnSync(command, args, { stdio: 'ignore' }).status === 0

export interface Tool {
  /** What is missing, as the one line says it. */
  missing: string
  /** How to get it. */
  get: string
  /** What is skipped without it. */
  skips: string
  present: () => boolean
}

export const TOOLS = {
  chromium: {
    missing: `${CHROMIUM} is missing`,
    get: 'Debian: apt-get install chromium, or name one in CHROMIUM_BIN',
    skips: 'the browser tests',
    present: () => existsSync(CHROMIUM)
  },
  h2load: {
    missing: 'h2load is missing',
    get: 'Debian: apt-get install nghttp2-client',
    skips: 'the HTTP/2 row of the bench\'s smoke run',
    present: () => runs('h2load', ['--version'])
  },
  prometheus: {
    missing: `prometheus and promtool are missing from ${join(PROMTOOL, '../../..')}`,
    get: 'scripts/fetch-prometheus.sh unpacks Debian\'s package there',
    skips: 'the alert rules\' promtool tests and the Prometheus scrape',
    present: () => existsSync(PROMTOOL) && existsSync(PROMETHEUS)
  },
  go: {
    missing: 'go or the nats.go sources are missing',
    get: 'Debian: apt-get install golang-go golang-github-nats-io-go-nats-dev',
    skips: 'the Go client test',
    present: () => runs('go', ['version']) && existsSync(join(GOPATH, 'src/github.com/nats-io/nats.go/micro'))
  },
  root: {
    missing: 'the suite does not run as root',
    get: 'setpriv switches to uid 65534 for root alone',
    skips: 'the check that the built service runs as uid 65534 (it runs as this user instead)',
    present: () => process.getuid?.() === 0
  }
} satisfies Record<string, Tool>

export type ToolName = keyof typeof TOOLS

const known = new Map<ToolName, boolean>()

/** Whether `name` is here (looked at once a process). */
export function has (name: ToolName): boolean {
  let present = known.get(name)
  if (present === undefined) {
    present = TOOLS[name].present()
    known.set(name, present)
  }
  return present
}

/** The one line that says what a missing program skips, and why it could not be had when that is known. */
export function skipLine (name: ToolName, why?: string): string {
  const { skips, missing, get } = TOOLS[name]
  return `skipped: ${skips}: ${missing} (${get}${why === undefined ? '' : `; ${why}`})`
}
