// `npm run token -- --name console --nodes '*' [--metrics] [--file tokens.json]`: makes a new random
// token and prints it once (it is stored nowhere). With --file, adds its entry (which holds only
// the token's SHA-256) to that tokens file, creating it when absent; without, prints the entry to add.

import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { parseArgs } from 'node:util'
import { StartError } from '../src/start-error.js'
import { newToken, parseTokens, type TokenEntry } from '../src/settings/tokens-file.js'

const USAGE_LINE = 'usage: npm run token -- --name <who> --nodes <"*" or node,node,...> [--metrics] [--file <tokens file>]'
const USAGE = `${USAGE_LINE}
  --name     who holds the token, as the log names it
  --nodes    the nodes it reads: '*' (quoted, or the shell puts file names there) or a comma-separated list
  --metrics  it also reads /metrics (the scraper's token)
  --file     the tokens file (HTTP_TOKENS_FILE) to add its entry to, created when absent
The token is printed once; the file keeps only its SHA-256. A running service reads the file again on SIGHUP.`

function refuse (message: string): never {
  process.stderr.write(`token: ${message}\n${USAGE_LINE}   (--help says more)\n`)
  process.exit(2)
}

let parsed
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: { name: { type: 'string' }, nodes: { type: 'string' }, metrics: { type: 'boolean', default: false }, file: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } }
  })
} catch (err) {
  refuse((err as Error).message)
}
const { values, positionals } = parsed
if (values.help) {
  process.stdout.write(`${USAGE}\n`)
  process.exit(0)
}
if (positionals.length > 0) {
  refuse(`unexpected argument${positionals.length > 1 ? 's' : ''} ${positionals.slice(0, 3).map((p) => `'${p}'`).join(', ')}${positionals.length > 3 ? ', …' : ''}: an unquoted * becomes the names of the files here; write --nodes '*' (quoted)`)
}
if (values.name === undefined || values.nodes === undefined) refuse(`${values.name === undefined ? '--name' : '--nodes'} is missing`)
const nodes = values.nodes.trim() === '*' ? '*' : values.nodes.split(',').map((n) => n.trim()).filter((n) => n !== '')

/**
 * The tokens file with `entry` added, one entry a line, and how many it holds; refused as the
 * service would refuse it (a malformed file, a name twice).
 */
function added (file: string, entry: TokenEntry): { text: string, count: number } {
  let entries: unknown[] = []
  if (existsSync(file)) {
    const before = readFileSync(file, 'utf8')
    parseTokens(before, file)
    entries = (JSON.parse(before) as { tokens: unknown[] }).tokens
  }
  const text = `{"tokens":[\n${[...entries, entry].map((e) => `  ${JSON.stringify(e)}`).join(',\n')}\n]}\n`
  return { text, count: parseTokens(text, file).length }
}

try {
  const { token, entry } = newToken(values.name, nodes, values.metrics)
  if (values.file === undefined) {
    process.stdout.write([
      `token (shown once, give it to ${entry.name}; the file keeps only its SHA-256):`,
      `  ${token}`,
      'the entry to add to "tokens" in the tokens file (or run this again with --file <tokens file>), then send the service SIGHUP:',
      `  ${JSON.stringify(entry)}`,
      ''
    ].join('\n'))
  } else {
    const file = values.file
    const { text, count } = added(file, entry)
    // Written beside and renamed over, so that a service reading it on SIGHUP never reads half a file.
    const mode = existsSync(file) ? statSync(file).mode & 0o777 : 0o600
    // Its folder made when absent: a fresh clone has no secrets/, where the docs keep the file.
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(`${file}.tmp`, text, { mode })
    renameSync(`${file}.tmp`, file)
    process.stdout.write([
      `token (shown once, give it to ${entry.name}; ${file} keeps only its SHA-256):`,
      `  ${token}`,
      `${file} now holds ${count} token${count === 1 ? '' : 's'}. Start the service with HTTP_TOKENS_FILE=${file}, or send a running one SIGHUP`,
      '(kill -HUP <pid>: the pid is in its "mesh-provisioner serving" log line, or the demo\'s last line) to read it again.',
      ''
    ].join('\n'))
  }
} catch (err) {
  if (err instanceof StartError) refuse(err.message)
  // The file unreadable or not writable: the system's words name it and why, and the arguments
  // were right, so no usage follows.
  if (typeof (err as NodeJS.ErrnoException).code === 'string') {
    process.stderr.write(`token: ${(err as Error).message}\n`)
    process.exit(2)
  }
  throw err
}
