// `npm run demo`: the service, for trying it out. With NATS_URL set it runs against that NATS as
// `npm start` would (no build needed). Without, it starts nats-server on a free port with a
// temporary store (under the shipped least-privilege users), seeds a small mesh, runs the service
// and prints how to ask it. Ctrl-C stops everything it started.

import { spawnSync } from 'node:child_process'
import { pino } from 'pino'
import { loadConfig } from '../src/config.js'
import { StartError } from '../src/start-error.js'
import { startService } from '../src/service.js'
import { VERSION } from '../src/version.js'
import { NatsServer, natsServerBin } from '../testkit/nats-server.js'
import { seedSampleMesh } from '../testkit/sample-mesh.js'

if (process.env['NATS_URL'] !== undefined) {
  await import('../src/main.js')
} else {
  await demo()
}

async function demo (): Promise<void> {
  if (spawnSync(natsServerBin(), ['--version']).error) {
    process.stderr.write(`demo: ${natsServerBin()} was not found; install it (Debian/Ubuntu: sudo apt-get install nats-server), set NATS_SERVER_BIN to its path, or set NATS_URL to use a NATS you have\n`)
    process.exit(1)
  }
  const server = await NatsServer.start()
  const nc = await server.connect()
  const seeded = await seedSampleMesh(nc)
  await nc.close()

  const config = loadConfig({ HTTP_PORT: '8080', LOG_LEVEL: 'warn', ...process.env, ...server.serviceEnv() })
  let running
  try {
    running = await startService({ config, log: pino({ level: config.logLevel }), version: VERSION })
  } catch (err) {
    await server.dispose()
    if (!(err instanceof StartError)) throw err
    process.stderr.write(`demo: ${err.message}\n`)
    process.exit(1)
  }
  const admin = NatsServer.credentials('admin')
  const bus = `NATS_URL=${server.url} NATS_USER=${admin.user} NATS_PASSWORD=${admin.pass}`

  process.stdout.write(`
mesh-provisioner ${VERSION} is running against a NATS of its own at ${server.url}
(store ${server.dir}), seeded with ${seeded.needs} needs, ${seeded.applied} applied and ${seeded.collect} collect keys, a few of them out of shape.

Over HTTP:
  curl -s '${running.url}/v1/needs?node=ace&module=gitea'
  curl -s '${running.url}/v1/collect?collection=shell:zsh:normal&node=ace'
  curl -s '${running.url}/v1/registry/secret'
  curl -s '${running.url}/v1/nodes'                      (the mesh at a glance)
  curl -s '${running.url}/v1/modules?state=pending'      (what is not applied yet)
  curl -s '${running.url}/v1/needs/facets?by=kind'
  open ${running.url}/docs for the Swagger page, ${running.url}/readyz and ${running.url}/metrics

On the bus (the verb ${config.subject}):
  ${bus} npm run ask -- '{"what":"needs","node":"ace","module":"gitea"}'
  ${bus} npm run ask -- '{"what":"applied","node":"g14"}'
  ${bus} npm run ask -- '{"what":"collect","module":"gitea"}'
  ${bus} npm run ask -- '{"what":"modules","node":"ace"}'
  ${bus} npm run ask -- '{"what":"needs","colour":"red"}'    (a refusal, said)

Ctrl-C stops the service and this NATS.
`)

  let stopping = false
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return
      stopping = true
      void (async () => {
        await running.stop()
        await server.dispose()
        process.stdout.write('stopped\n')
        process.exit(0)
      })()
    })
  }
}
