// Asks the verb from the command line, as a module on the bus would:
//   npm run ask -- '{"what":"needs","node":"ace"}'
// Connects with the same settings as the service (NATS_URL, NATS_USER/NATS_PASSWORD, ...).

import { connect } from 'nats'
import { loadConfig } from '../src/config.js'
import { connectionOptions } from '../src/nats.js'

const config = loadConfig(process.env)
const request = process.argv[2] ?? ''
// A client of the verb, not the service: the default inbox prefix, on which the service answers.
const nc = await connect({ ...connectionOptions(config.nats), inboxPrefix: '_INBOX', maxReconnectAttempts: 0 })
try {
  const reply = await nc.request(config.subject, request, { timeout: 5000 })
  const code = reply.headers?.get('Nats-Service-Error-Code')
  if (code) process.stderr.write(`error ${code}: ${reply.headers?.get('Nats-Service-Error') ?? ''}\n`)
  process.stdout.write(`${JSON.stringify(JSON.parse(reply.string()), null, 2)}\n`)
  process.exitCode = code ? 1 : 0
} finally {
  await nc.close()
}
