// Asks the verb from the command line, as a module on the bus would:
//   npm run ask -- '{"what":"needs","node":"ace"}'
// Connects with the same settings as the service (NATS_URL, NATS_USER/NATS_PASSWORD, ...). What
// keeps it from an answer (no NATS there, no service on it, refused credentials) is one line.

import { connect, ErrorCode, NatsError, type NatsConnection } from 'nats'
import { loadConfig } from '../src/config.js'
import { StartError } from '../src/start-error.js'
import { connectionOptions } from '../src/nats.js'

const USAGE = 'usage: [NATS_URL=nats://host:4222 NATS_USER=… NATS_PASSWORD=…] npm run ask -- \'{"what":"needs","node":"ace"}\'   (npm run demo prints the settings of its NATS)'

function refuse (message: string, code = 1): never {
  process.stderr.write(`ask: ${message}\n`)
  process.exit(code)
}

const request = process.argv[2]
if (request === undefined || request === '--help' || request === '-h') refuse(USAGE, request === undefined ? 2 : 0)

let config
try {
  config = loadConfig(process.env)
} catch (err) {
  if (!(err instanceof StartError)) throw err
  refuse(err.message, 2)
}
const where = `NATS_URL=${config.nats.servers.join(',')}${process.env['NATS_URL'] === undefined ? ' (NATS_URL is not set: the default)' : ''}`

let nc: NatsConnection
try {
  // A client of the verb, not the service: the default inbox prefix, on which the service answers.
  nc = await connect({ ...connectionOptions(config.nats), inboxPrefix: '_INBOX', maxReconnectAttempts: 0 })
} catch (err) {
  if (err instanceof NatsError && (err.isAuthError() || err.isAuthTimeout())) refuse(`NATS at ${where} refused the credentials (${err.message}); set NATS_USER and NATS_PASSWORD, NATS_TOKEN or NATS_CREDS (npm run demo prints its own)`)
  refuse(`nothing answers at ${where} (${(err as Error).message}); set NATS_URL to where NATS listens (npm run demo prints the one to use)`)
}
try {
  const reply = await nc.request(config.subject, request, { timeout: 5000 })
  const code = reply.headers?.get('Nats-Service-Error-Code')
  if (code) process.stderr.write(`error ${code}: ${reply.headers?.get('Nats-Service-Error') ?? ''}\n`)
  process.stdout.write(`${JSON.stringify(JSON.parse(reply.string()), null, 2)}\n`)
  process.exitCode = code ? 1 : 0
} catch (err) {
  if (!(err instanceof NatsError)) throw err
  process.exitCode = 1
  if (err.code === ErrorCode.NoResponders) process.stderr.write(`ask: no mesh-provisioner answers ${config.subject} at ${where}; set NATS_URL to its NATS (npm run demo prints the one to use)\n`)
  else if (err.code === ErrorCode.Timeout) process.stderr.write(`ask: ${config.subject} at ${where} did not answer within 5 s\n`)
  else process.stderr.write(`ask: ${config.subject} at ${where}: ${err.message}\n`)
} finally {
  await nc.close()
}
