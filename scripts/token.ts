// `npm run token -- --name console --nodes '*' [--metrics]`: makes a new random token, prints it once
// (it is stored nowhere) and the line to add to the tokens file (HTTP_TOKENS_FILE), which holds only
// its SHA-256.

import { parseArgs } from 'node:util'
import { StartError } from '../src/start-error.js'
import { newToken } from '../src/http/tokens.js'

const USAGE = 'usage: npm run token -- --name <who> --nodes <"*" or node,node,...> [--metrics]'

let values
try {
  ({ values } = parseArgs({ options: { name: { type: 'string' }, nodes: { type: 'string' }, metrics: { type: 'boolean', default: false } } }))
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n${USAGE}\n`)
  process.exit(2)
}
if (values.name === undefined || values.nodes === undefined) {
  process.stderr.write(`${USAGE}\n`)
  process.exit(2)
}
const nodes = values.nodes.trim() === '*' ? '*' : values.nodes.split(',').map((n) => n.trim()).filter((n) => n !== '')
try {
  const { token, entry } = newToken(values.name, nodes, values.metrics)
  process.stdout.write([
    `token (shown once, give it to ${entry.name}; the file keeps only its SHA-256):`,
    `  ${token}`,
    'the entry to add to "tokens" in the tokens file, then send the service SIGHUP:',
    `  ${JSON.stringify(entry)}`,
    ''
  ].join('\n'))
} catch (err) {
  if (!(err instanceof StartError)) throw err
  process.stderr.write(`${err.message}\n${USAGE}\n`)
  process.exit(2)
}
