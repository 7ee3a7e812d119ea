// The command that runs the built service, as `npm start` says it: the bench and the container
// test run the service with its environment and node flags, so that they measure and prove what is
// shipped.

import { readFileSync } from 'node:fs'

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }

/**
 * `npm start` as words: `node`, its flags, the entrypoint. The script's leading `exec` is the
 * shell's (npm runs a script with sh, and dash would otherwise keep itself between npm and node,
 * so a signal to npm would end sh and leave the service running), not part of the command.
 */
const WORDS = pkg.scripts.start.split(' ').filter((w) => w !== '' && w !== 'exec')
const ASSIGNMENT = /^([A-Z_]+)=(.*)$/

/**
 * The environment `npm start` sets (its leading `NAME=value` words): glibc reads MALLOC_ARENA_MAX
 * as the process starts, so it is set before node, not by the service (docs/running.md).
 */
export const START_ENV: Readonly<Record<string, string>> = Object.fromEntries(WORDS.flatMap((w) => {
  const assigned = ASSIGNMENT.exec(w)
  return assigned === null ? [] : [[assigned[1] as string, assigned[2] as string]]
}))

export const START_COMMAND: readonly string[] = WORDS.filter((w) => !ASSIGNMENT.test(w))

/** The node flags of `npm start` (between `node` and the entrypoint). */
export const NODE_FLAGS: readonly string[] = START_COMMAND.slice(1, -1)
