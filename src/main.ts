// The process: reads the settings, starts the service, and stops it gracefully on SIGTERM/SIGINT.
// The only place that handles signals or exits; startService (service.ts) wires the parts and listens.

import closeWithGrace from 'close-with-grace'
import { pino } from 'pino'
import { ConfigError, loadConfig } from './config.js'
import { NatsAuthError } from './nats.js'
import { startService } from './service.js'
import { VERSION } from './version.js'

let config
try {
  config = loadConfig(process.env)
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  process.stderr.write(`mesh-provisioner: ${err.message}\n`)
  process.exit(2)
}

const log = pino({ level: config.logLevel, base: { service: 'mesh-provisioner', version: VERSION } })
let running: Awaited<ReturnType<typeof startService>> | undefined

// A signal during the start finds nothing to drain: close-with-grace then exits at once.
closeWithGrace({ delay: 8000, logger: log }, async ({ signal, err }) => {
  if (err) log.error({ err }, 'stopping after an unexpected error')
  else log.info({ signal }, 'stopping')
  await running?.stop()
  log.info('stopped')
})

try {
  running = await startService({ config, log, version: VERSION })
} catch (err) {
  const message = err instanceof NatsAuthError ? err.message : `the service could not start: ${(err as Error).message}`
  log.fatal({ err }, message)
  process.stderr.write(`mesh-provisioner: ${message}\n`)
  process.exit(1)
}
