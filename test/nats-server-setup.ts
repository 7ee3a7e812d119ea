// Makes sure each project of the suite runs on the nats-server line it is named for (vitest.config.ts):
// the maintained 2.10 is fetched when it is missing (scripts/fetch-nats-server.sh; in CI, .ci/run
// has fetched it already, and a missing one fails there), and a binary of another line fails the
// run rather than testing something else under the project's name.

import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { TestProject } from 'vitest/node'
import { FETCHED_NATS_SERVER } from '../testkit/nats-server.js'

const FETCH = fileURLToPath(new URL('../scripts/fetch-nats-server.sh', import.meta.url))

function versionOf (bin: string): string | undefined {
  try {
    return /v(\d+\.\d+\.\d+)/.exec(execFileSync(bin, ['--version'], { encoding: 'utf8' }))?.[1]
  } catch {
    return undefined
  }
}

export default function setup (project: TestProject): void {
  const env = project.config.env
  const bin = env['NATS_SERVER_BIN'] as string
  const line = env['NATS_SERVER_LINE'] as string
  if (bin === FETCHED_NATS_SERVER && !existsSync(bin) && process.env['CI'] !== 'true') {
    execFileSync('bash', [FETCH], { stdio: ['ignore', 'ignore', 'inherit'] })
  }
  const version = versionOf(bin)
  if (version === undefined) {
    throw new Error(`project ${project.name}: nats-server ${line} not found at ${bin}; run scripts/fetch-nats-server.sh (2.10), apt-get install nats-server (Debian 12's 2.9), or name one in NATS_SERVER_BIN / NATS_SERVER_2_9_BIN`)
  }
  if (!version.startsWith(`${line}.`)) {
    throw new Error(`project ${project.name}: ${bin} is nats-server ${version}, not ${line}; name a ${line} binary in ${line === '2.9' ? 'NATS_SERVER_2_9_BIN' : 'NATS_SERVER_BIN'}`)
  }
}
