// The process: reads the settings, starts the service, stops it gracefully on SIGTERM/SIGINT, and
// reads its tokens and certificate again on SIGHUP. The only place that handles signals or exits;
// startService (service.ts) wires the parts and listens.

import closeWithGrace from 'close-with-grace'
import { loadConfig } from './config.js'
import { stopSignalMeaning } from './stop-signal.js'
import { StartError } from './start-error.js'
import { EXIT_STATUS } from './exit-status.js'
import { createLog } from './log.js'
import { startService } from './service.js'
import { VERSION } from './version.js'

// The oldest Node the service and its libraries support (package.json engines); it runs on Node 24 LTS.
const NODE_MAJOR = 22
if (Number(process.versions.node.split('.')[0]) < NODE_MAJOR) {
  process.stderr.write(`mesh-provisioner: Node ${process.version} is too old; run it on Node 24 LTS (at least ${NODE_MAJOR})\n`)
  process.exit(1)
}

let config
try {
  config = loadConfig(process.env)
} catch (err) {
  if (!(err instanceof StartError)) throw err
  process.stderr.write(`mesh-provisioner: ${err.message}\n`)
  process.exit(EXIT_STATUS[err.code])
}

const log = createLog(config.logLevel, { service: 'mesh-provisioner', version: VERSION })
let running: Awaited<ReturnType<typeof startService>> | undefined

// SIGHUP re-reads and never stops (close-with-grace would stop on it); during the start there is
// nothing to re-read yet, and the files were read a moment ago.
process.on('SIGHUP', () => {
  log.info({ signal: 'SIGHUP' }, 'reading the tokens and the certificate again')
  running?.reload()
})

// close-with-grace bounds the stop (8 s) and stops on an unexpected error; the stop signals are
// read here, since it takes any second signal to mean "exit now", and under `npm start` the first
// one comes twice (stop-signal.ts). A stop during the start finds nothing to drain and exits at once.
let stoppingSince: number | undefined
const grace = closeWithGrace({ delay: 8000, logger: log, skip: ['SIGHUP', 'SIGINT', 'SIGTERM'] }, async ({ err }) => {
  stoppingSince ??= performance.now()
  if (err) log.error({ err }, 'stopping after an unexpected error')
  await running?.stop()
  log.info('stopped')
})
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    const meaning = stopSignalMeaning(stoppingSince, performance.now())
    if (meaning === 'repeat') {
      log.info({ signal }, 'the same stop signal again (npm passes on what the service got too): stopping as before')
      return
    }
    if (meaning === 'now') {
      log.error({ signal }, `second ${signal}, exiting`)
      process.exit(1)
    }
    stoppingSince = performance.now()
    log.info({ signal }, 'stopping')
    void grace.close()
  })
}

try {
  running = await startService({ config, log, version: VERSION })
} catch (err) {
  // A cause an operator can act on is one line; anything else is a fault, logged with its stack.
  if (err instanceof StartError) {
    process.stderr.write(`mesh-provisioner: ${err.message}\n`)
    process.exit(EXIT_STATUS[err.code])
  }
  const message = `the service could not start: ${(err as Error).message}`
  log.fatal({ err }, message)
  process.stderr.write(`mesh-provisioner: ${message}\n`)
  process.exit(1)
}
