// Settings against real servers: every secret through its `_FILE` twin, TLS to NATS with a CA made
// here by openssl (and refused without it), and refused credentials said at once, by name.

import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { beforeAll, describe, expect, test } from 'vitest'
import type { Running } from '../src/service.js'
import type { NatsServer, NatsServerOptions } from '../testkit/nats-server.js'
import { startTestService, suiteFixture, untilReady } from './support/service.js'
import { requestVerb } from './support/verb.js'

const run = promisify(execFile)
let dir: string
const fx = suiteFixture()

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-settings-'))
  fx.defer(async () => await rm(dir, { recursive: true, force: true }))
})

const server = async (opts: NatsServerOptions = {}): Promise<NatsServer> => await fx.server(opts)
const service = async (s: NatsServer, env: Record<string, string>): Promise<Running> => await fx.service(s, env)
async function secretFile (name: string, text: string): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, `${text}\n`, { mode: 0o600 })
  return path
}

/** The service signed in and serves: a module on the bus gets the registry from the verb. */
async function serves (s: NatsServer, running: Running, opts: Parameters<NatsServer['connect']>[0] = {}): Promise<void> {
  await untilReady(running)
  const nc = await fx.admin(s, opts)
  const msg = await requestVerb(nc, '')
  expect(msg.headers?.get('Nats-Service-Error-Code') ?? '').toBe('')
  expect(msg.json()).toMatchObject({ what: 'registry' })
}

describe('secrets from files', () => {
  test('NATS_PASSWORD_FILE signs in as the service\'s user', async () => {
    const s = await server()
    const env = s.serviceEnv()
    const running = await service(s, { NATS_PASSWORD: '', NATS_PASSWORD_FILE: await secretFile('password', env['NATS_PASSWORD'] as string) })
    await serves(s, running)
  })

  test('NATS_TOKEN_FILE signs in with the token; a wrong one is refused at once, naming the settings', async () => {
    const s = await server({ token: 'tok3n-from-a-file' })
    await serves(s, await service(s, { NATS_TOKEN: '', NATS_TOKEN_FILE: await secretFile('token', 'tok3n-from-a-file') }))
    const wrong = startTestService(s, { NATS_TOKEN: '', NATS_TOKEN_FILE: await secretFile('wrong-token', 'not-the-token') })
    await expect(wrong).rejects.toThrow(expect.objectContaining({ name: 'StartError', code: 'NATS_SIGN_IN_REFUSED' }))
    await expect(wrong).rejects.toThrow(/refused the credentials .*NATS_TOKEN/)
  })

  test('a wrong password is refused at once, not retried', async () => {
    const s = await server()
    // Retried, the start would never end: the test's timeout is the bound.
    await expect(startTestService(s, { NATS_PASSWORD: 'wrong' })).rejects.toThrow(/^NATS at nats:\/\/127\.0\.0\.1:\d+ refused the credentials/)
  })
})

describe('TLS to NATS with a CA made by openssl', () => {
  let ca: string
  let tls: NatsServer

  beforeAll(async () => {
    ca = join(dir, 'ca.pem')
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
    await run('openssl', ['req', '-x509', ...ec, '-keyout', join(dir, 'ca.key'), '-out', ca, '-days', '1', '-subj', '/CN=mesh-test-ca'])
    await run('openssl', ['req', ...ec, '-keyout', join(dir, 'server.key'), '-out', join(dir, 'server.csr'), '-subj', '/CN=127.0.0.1'])
    await writeFile(join(dir, 'san.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
    await run('openssl', ['x509', '-req', '-in', join(dir, 'server.csr'), '-CA', ca, '-CAkey', join(dir, 'ca.key'), '-CAcreateserial',
      '-out', join(dir, 'server.pem'), '-days', '1', '-extfile', join(dir, 'san.cnf')])
    tls = await server({ config: `tls { cert_file: ${JSON.stringify(join(dir, 'server.pem'))}, key_file: ${JSON.stringify(join(dir, 'server.key'))} }` })
  })

  test('with NATS_TLS_CA the service connects over TLS and serves', async () => {
    const running = await service(tls, { NATS_URL: `tls://127.0.0.1:${tls.port}`, NATS_TLS_CA: ca })
    await serves(tls, running, { tls: { caFile: ca } })
    expect(running.nc.info?.tls_required).toBe(true)
  })

  test('without the CA it is refused at once with one clear message naming the TLS settings', async () => {
    // Retried, the start would never end: the test's timeout is the bound.
    await expect(startTestService(tls, { NATS_URL: `tls://127.0.0.1:${tls.port}` })).rejects.toThrow(/^TLS to NATS at tls:\/\/127\.0\.0\.1:\d+ failed \(.*certificate.*\); check NATS_TLS_CA/)
  })
})
