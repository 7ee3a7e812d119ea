// `npm run demo`: the service, for trying it out. With NATS_URL set it runs against that NATS as
// `npm start` would (no build needed). Without, it starts nats-server on a free port with a
// temporary store (under the shipped least-privilege users), seeds a small mesh, runs the service,
// plays a few provisioner clients writing to it (`--still`: none) and prints how to look and ask.
// SIGINT or SIGTERM (Ctrl-C, `kill <pid>` of npm or of this process) stops everything it started
// and removes the store, whenever it comes and however often; SIGHUP reads the tokens again.

import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { NatsConnection } from 'nats'
import { pino } from 'pino'
import { loadConfig } from '../src/config.js'
import { StartError } from '../src/start-error.js'
import { startService, type Running } from '../src/service.js'
import { VERSION } from '../src/version.js'
import { NatsServer, natsServerBin } from '../testkit/nats-server.js'
import { playProvisioners, type Playing } from '../testkit/provisioner-player.js'
import { MODULES, NODES, seedSampleMesh } from '../testkit/sample-mesh.js'

const USAGE = 'usage: npm run demo [-- --still]   (--still: no provisioner clients write to the mesh)'
/** How often a provisioner client writes. */
const TURN_MS = 3000
/** How long the stop may take before what is left is killed. */
const STOP_MS = 10_000

let still: boolean
try {
  ({ values: { still } } = parseArgs({ options: { still: { type: 'boolean', default: false } } }))
} catch (err) {
  process.stderr.write(`demo: ${(err as Error).message}\n${USAGE}\n`)
  process.exit(2)
}

if (process.env['NATS_URL'] !== undefined) {
  await import('../src/main.js')
} else {
  await demo(still)
}

/** What the demo started, each part once it is up. */
interface Parts {
  server?: NatsServer
  /** The provisioner clients' connection (the shipped `admin` user). */
  nc?: NatsConnection
  running?: Running
  playing?: Playing
}

async function demo (still: boolean): Promise<void> {
  if (spawnSync(natsServerBin(), ['--version']).error) {
    process.stderr.write(`demo: ${natsServerBin()} was not found; install it (Debian/Ubuntu: sudo apt-get install nats-server), set NATS_SERVER_BIN to its path, or set NATS_URL to use a NATS you have\n`)
    process.exit(1)
  }
  const parts: Parts = {}
  const log = heldLog()
  let stopping: Promise<void> | undefined
  const starting = start(parts, log, still, () => stopping !== undefined)
  // A signal during the start waits for the step in flight, so that nothing it opens is left behind.
  const stop = (code: number): void => {
    stopping ??= (async () => {
      setTimeout(() => { void kill(parts).finally(() => process.exit(1)) }, STOP_MS)
      await starting.catch(() => {})
      await stopParts(parts)
      process.stdout.write(`stopped${parts.server === undefined ? '' : `: the service, its NATS and ${parts.server.dir} are gone`}\n`)
      process.exit(code)
    })()
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => { stop(0) })
  // Said here, since the demo's service logs warnings only: a file that will not do is one of them.
  process.on('SIGHUP', () => {
    if (parts.running === undefined) return
    process.stdout.write('SIGHUP: reading the tokens file and the certificate again\n')
    parts.running.reload()
  })
  // The process that started it gone (npm killed, the terminal closed), the demo does not outlive it.
  const parent = process.ppid
  setInterval(() => { if (process.ppid !== parent) stop(0) }, 1000).unref()
  try {
    await starting
  } catch (err) {
    log.release()
    process.stderr.write(`demo: ${err instanceof StartError ? err.message : (err as Error).stack ?? String(err)}\n`)
    stop(1)
  }
}

async function start (parts: Parts, log: HeldLog, still: boolean, stopping: () => boolean): Promise<void> {
  const server = parts.server = await NatsServer.start({ detached: true })
  if (stopping()) return
  const nc = parts.nc = await server.connect()
  const seeded = await seedSampleMesh(nc)
  const config = loadConfig({ HTTP_PORT: '8080', LOG_LEVEL: 'warn', ...process.env, ...server.serviceEnv() })
  if (stopping()) return
  const running = parts.running = await startService({ config, log: pino({ level: config.logLevel }, log), version: VERSION })
  if (stopping()) return
  if (!still) {
    parts.playing = await playProvisioners(nc, {
      nodes: NODES,
      modules: MODULES,
      everyMs: TURN_MS,
      onError: (err) => { process.stderr.write(`demo: a provisioner client's write failed: ${err.message}\n`) }
    })
  }
  const url = running.url
  // The curl lines as they work against this gateway, pasted anywhere: its certificate trusted (by
  // its absolute path, quoted for the shell), its token sent.
  const tls = config.http.tls === undefined ? '' : `--cacert '${resolve(config.http.tls.certFile).replaceAll("'", "'\\''")}' `
  const token = config.http.tokensFile === undefined ? '' : '-H "Authorization: Bearer $TOKEN" '
  const curl = (flags: string): string => `curl ${flags} ${tls}${token}`
  const admin = NatsServer.credentials('admin')
  const bus = `NATS_URL=${server.url} NATS_USER=${admin.user} NATS_PASSWORD=${admin.pass}`
  process.stdout.write(`mesh-provisioner ${VERSION}: the mesh at a glance is at ${url}/\n`)
  log.release()
  process.stdout.write(`
It runs against a NATS of its own at ${server.url} (store ${server.dir}),
seeded with ${seeded.needs} needs, ${seeded.applied} applied and ${seeded.collect} collect keys, a few of them out of shape.
${still
  ? 'The mesh is still (--still): nothing writes to it but you.'
  : `${NODES.length} provisioner clients write needs, apply them a while later (some after minutes), now and then
ask for a kind no domain answers and delete a need, every ${TURN_MS / 1000} s (npm run demo -- --still: none).`}

Over HTTP${token === '' ? '' : `, after TOKEN=<a token of ${config.http.tokensFile as string}, as npm run token printed it> on a line of its own`}:
  ${curl('-s')}'${url}/v1/needs?node=ace&module=gitea'
  ${curl('-s')}'${url}/v1/collect?collection=shell:zsh:normal&node=ace'
  ${curl('-s')}'${url}/v1/registry/secret'
  ${curl('-s')}'${url}/v1/nodes'                      (the mesh at a glance)
  ${curl('-s')}'${url}/v1/modules?state=pending'      (what is not applied yet)
  ${curl('-s')}'${url}/v1/needs/facets?by=kind'
  ${curl('-sN')}'${url}/v1/needs/events?node=ace'     (changes as they come)
  open ${url}/docs for the Swagger page, ${url}/readyz and ${url}/metrics

On the bus (the verb ${config.subject}), with this NATS's URL and user:
  ${bus} npm run ask -- '{"what":"needs","node":"ace","module":"gitea"}'
  ${bus} npm run ask -- '{"what":"applied","node":"g14"}'
  ${bus} npm run ask -- '{"what":"collect","module":"gitea"}'
  ${bus} npm run ask -- '{"what":"modules","node":"ace"}'
  ${bus} npm run ask -- '{"what":"needs","colour":"red"}'    (a refusal, said)

Ctrl-C (or kill ${process.pid}) stops the service and this NATS; kill -HUP ${process.pid} reads HTTP_TOKENS_FILE again.
`)
}

/** Stops what started, last first; a part that fails to stop is said and the others still stop. */
async function stopParts (parts: Parts): Promise<void> {
  const steps = [
    async () => await parts.playing?.stop(),
    async () => await parts.nc?.close(),
    async () => await parts.running?.stop(),
    async () => await parts.server?.dispose()
  ]
  for (const step of steps) {
    try {
      await step()
    } catch (err) {
      process.stderr.write(`demo: ${(err as Error).message}\n`)
    }
  }
}

/** A stop past its time: the NATS killed, its store removed. */
async function kill (parts: Parts): Promise<void> {
  process.stderr.write(`demo: the stop took more than ${STOP_MS / 1000} s; killing nats-server\n`)
  await parts.server?.kill()
  await parts.server?.dispose()
}

/**
 * The service's log as the demo shows it: a short line per record (`warn: …`, not JSON), held
 * until `release`, so that the page's URL is the first thing the demo prints.
 */
interface HeldLog { write: (record: string) => void, release: () => void }

function heldLog (): HeldLog {
  let held: string[] | undefined = []
  return {
    write (record) {
      const { level, msg, err } = JSON.parse(record) as { level: number, msg: string, err?: { message?: string } }
      const line = `${pino.levels.labels[level] ?? level}: ${msg}${err?.message === undefined ? '' : ` (${err.message})`}\n`
      if (held === undefined) process.stdout.write(line)
      else held.push(line)
    },
    release () {
      for (const line of held ?? []) process.stdout.write(line)
      held = undefined
    }
  }
}
