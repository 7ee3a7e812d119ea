// Who may read, as an operator runs the process (docs/access.md, §6): the start refused for each unsafe or
// contradictory setting, HTTPS with a certificate the test makes, SIGHUP re-reading the tokens and
// the certificate without stopping, and a log at trace level through the whole session that holds
// no token and no password; SIGTERM exits 0 at once though an HTTP/2 client stopped reading.

import { execFile } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { connect as h2connect, type IncomingHttpHeaders } from 'node:http2'
import { connect as tlsConnect } from 'node:tls'
import { createHash, X509Certificate } from 'node:crypto'
import { Agent } from 'undici'
import { request } from './support/http.js'
import { beforeAll, expect, test, vi } from 'vitest'
import { findToken } from '../src/http/tokens.js'
import { newToken, parseTokens, type TokenEntry } from '../src/settings/tokens-file.js'
import { NatsServer } from '../testkit/nats-server.js'
import { seedSampleMesh } from '../testkit/sample-mesh.js'
import { compiledScript, runMain } from './support/process.js'
import { selfSigned } from './support/certificate.js'
import { suiteFixture } from './support/service.js'

let server: NatsServer
let dir: string

/** A self-signed certificate for 127.0.0.1 and its key, as text, and its fingerprint. */
function makeCertificate (name: string): { cert: string, key: string, fingerprint: string } {
  const { certFile, keyFile } = selfSigned(dir, name)
  const cert = readFileSync(certFile, 'utf8')
  return { cert, key: readFileSync(keyFile, 'utf8'), fingerprint: new X509Certificate(cert).fingerprint256 }
}

const fx = suiteFixture()

const tokensFile = (...entries: TokenEntry[]): string => JSON.stringify({ tokens: entries })
let malformed: string
let empty: string

beforeAll(async () => {
  server = await fx.server()
  await seedSampleMesh(await fx.admin(server))
  dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-access-process-'))
  // Written once, before the refused starts that read them run side by side.
  malformed = join(dir, 'malformed.json')
  await writeFile(malformed, tokensFile(newToken('console', '*', false).entry, { ...newToken('ace', ['ace'], false).entry, name: 'a ce' }))
  empty = join(dir, 'empty.pem')
  await writeFile(empty, '')
})

// Each refused start is a process of its own that exits at once: they run side by side (~1 s of
// CPU each, most of it loading the service's modules), where in turn they took ~2.5 s each.
test.concurrent.for<[Record<string, string>, string]>([
  [{ HTTP_HOST: '0.0.0.0' }, 'HTTP_HOST="0.0.0.0": the gateway would answer anyone beyond this machine; set HTTP_TOKENS_FILE (npm run token makes one), or HTTP_AUTH=none when a proxy in front authenticates'],
  [{ HTTP_AUTH: 'none', HTTP_TOKENS_FILE: '/dev/null' }, 'HTTP_AUTH="none": HTTP_TOKENS_FILE is set too: none says nobody is asked for a token; set one of them'],
  [{ HTTP_AUTH: 'off' }, 'HTTP_AUTH="off": it takes none (serve without tokens behind a proxy that authenticates), or leave it unset'],
  [{ HTTP_TLS_CERT: '/dev/null' }, 'HTTP_TLS_KEY: a certificate and its key go together; set both HTTP_TLS_CERT and HTTP_TLS_KEY, or neither'],
  [{ HTTP_TLS_CERT: 'EMPTY', HTTP_TLS_KEY: 'EMPTY' }, 'HTTP_TLS_CERT="EMPTY": that file holds no PEM certificate (it is empty); it takes a PEM certificate chain (-----BEGIN CERTIFICATE-----)'],
  [{ HTTP_TOKENS_FILE: 'MALFORMED' }, 'HTTP_TOKENS_FILE: MALFORMED: token #2: name takes 1 to 64 of A-Z a-z 0-9 _ . @ : -'],
  [{ NATS_URL: 'nats://mesh-provisioner:hunter2@127.0.0.1:4222' }, 'NATS_URL: a server URL holds a user and password (user:password@); set NATS_USER and NATS_PASSWORD_FILE beside the address instead'],
  [{ NATS_URL: 'nats://hunter2@127.0.0.1:4222' }, 'NATS_URL: a server URL holds a token (token@); set NATS_TOKEN_FILE beside the address instead']
])('the start is refused: %j, exit 2 and one line', async ([env, line], { expect }) => {
  const settings = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === 'MALFORMED' ? malformed : v === 'EMPTY' ? empty : v]))
  const { proc, out } = runMain({ ...server.serviceEnv(), ...settings })
  const [code] = await once(proc, 'close')
  expect(code).toBe(2)
  expect(out()).toBe(`mesh-provisioner: ${line.replace('MALFORMED', malformed).replace('EMPTY', empty)}\n`)
  expect(out()).not.toContain('hunter2')
})

test.concurrent('npm run token prints a new token once and the tokens file entry that admits it alone', async ({ expect }) => {
  const script = compiledScript('scripts/token')
  const make = async (): Promise<string[]> => (await promisify(execFile)(process.execPath, [script.file, '--name', 'ace', '--nodes', 'ace,g14'], { env: { ...process.env, ...script.env } })).stdout.split('\n')
  const [lines, again] = await Promise.all([make(), make()])
  const token = lines[1]?.trim() as string
  expect(token).not.toBe(again[1]?.trim())
  const tokens = parseTokens(`{"tokens":[${lines[3]?.trim() as string}]}`, 'made')
  expect(tokens).toEqual([{ name: 'ace', sha256: createHash('sha256').update(token).digest('hex'), nodes: ['ace', 'g14'], metrics: false }])
  expect(findToken(tokens, token)?.name).toBe('ace')
})

test('serves HTTPS only, re-reads tokens and certificate on SIGHUP without stopping, and logs no secret at trace level', async () => {
  const first = makeCertificate('first')
  const second = makeCertificate('second')
  const certFile = join(dir, 'gateway.crt')
  const keyFile = join(dir, 'gateway.key')
  await writeFile(certFile, first.cert)
  await writeFile(keyFile, first.key)
  const console_ = newToken('console', '*', true)
  const ace = newToken('ace', ['ace'], false)
  const fresh = newToken('fresh', ['g14'], false)
  const file = join(dir, 'tokens.json')
  await writeFile(file, tokensFile(console_.entry, ace.entry))
  const { user, pass } = NatsServer.credentials('mesh-provisioner')
  const passFile = join(dir, 'nats-password')
  await writeFile(passFile, `${pass}\n`)

  const { proc, out } = runMain({
    NATS_URL: server.url,
    NATS_USER: user,
    NATS_PASSWORD_FILE: passFile,
    HTTP_TOKENS_FILE: file,
    HTTP_TLS_CERT: certFile,
    HTTP_TLS_KEY: keyFile,
    LOG_LEVEL: 'trace'
  })
  const agent = new Agent({ connect: { ca: [first.cert, second.cert] } })
  try {
    const serving = await vi.waitFor(() => {
      const m = /"url":"(https:\/\/127\.0\.0\.1:\d+)"[^\n]*"msg":"mesh-provisioner serving"/.exec(out())
      if (m === null) throw new Error('the service to serve')
      return m
    }, { timeout: 20_000, interval: 50 })
    const base = serving[1] as string
    const port = Number(new URL(base).port)
    const get = async (path: string, token?: string): Promise<{ status: number, body: string }> => {
      const res = await request(`${base}${path}`, { dispatcher: agent, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
      return { status: res.statusCode, body: await res.body.text() }
    }
    const fingerprint = async (): Promise<string> => await new Promise((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port, ca: [first.cert, second.cert] }, () => {
        resolve(socket.getPeerCertificate().fingerprint256)
        socket.end()
      })
      socket.on('error', reject)
    })
    const hup = async (logged: string): Promise<void> => {
      const seen = out().split(logged).length
      proc.kill('SIGHUP')
      await vi.waitFor(() => { expect(out().split(logged).length, `"${logged}" in the log`).toBeGreaterThan(seen) }, { timeout: 10_000, interval: 50 })
    }

    await vi.waitFor(async () => { expect((await get('/v1/needs?node=ace', ace.token)).status, 'ace read over HTTPS').toBe(200) }, { timeout: 15_000, interval: 100 })
    expect(await fingerprint()).toBe(first.fingerprint)
    await expect(request(`http://127.0.0.1:${port}/healthz`, { headersTimeout: 5000, bodyTimeout: 5000 })).rejects.toThrow()
    expect((await get('/v1/needs')).status).toBe(401)
    expect((await get(`/v1/needs?access_token=${console_.token}`)).status).toBe(401)
    expect((await get('/v1/needs', 'wrong-token')).status).toBe(401)
    expect((await get('/v1/needs?node=g14', ace.token)).status).toBe(403)
    expect((await get('/metrics', console_.token)).status).toBe(200)

    // The certificate: rotated, then a pair that does not match is refused and the second stays.
    await writeFile(certFile, second.cert)
    await writeFile(keyFile, second.key)
    await hup('HTTP_TLS_CERT and HTTP_TLS_KEY read again')
    expect(await fingerprint()).toBe(second.fingerprint)
    await writeFile(certFile, first.cert)
    await hup('the certificate was not read again, the one read before stays')
    expect(out()).toMatch(/"level":40[^\n]*do not make a certificate and its key/)
    expect(await fingerprint()).toBe(second.fingerprint)
    // An emptied certificate file (a rotation caught half-written) is refused too, not served.
    await writeFile(certFile, '')
    await hup('the certificate was not read again, the one read before stays')
    expect(out()).toMatch(/"level":40[^\n]*holds no PEM certificate \(it is empty\)/)
    expect(await fingerprint()).toBe(second.fingerprint)
    await writeFile(certFile, second.cert)
    expect((await get('/v1/needs?node=ace', ace.token)).status).toBe(200)

    // The tokens: replaced, then a malformed file leaves them as they were.
    await writeFile(file, tokensFile(console_.entry, fresh.entry))
    await hup('HTTP_TOKENS_FILE read again')
    expect((await get('/v1/needs?node=g14', fresh.token)).status).toBe(200)
    expect((await get('/v1/needs?node=ace', ace.token)).status).toBe(401)
    await writeFile(file, '{"tokens":[{"name":"fresh"}]}')
    await hup('HTTP_TOKENS_FILE not read again, the tokens read before stay')
    expect(out()).toMatch(/"level":40[^\n]*token \\"fresh\\": it has no sha256/)
    expect((await get('/v1/needs?node=g14', fresh.token)).status).toBe(200)
    expect(proc.exitCode).toBeNull()

    // A client that stopped reading (a window of 0, one stream open) holds no stop up: close-with-grace
    // would exit 1 after 8 s.
    const unread = h2connect(base, { ca: second.cert, settings: { initialWindowSize: 0 } })
    unread.on('error', () => {})
    const stream = unread.request({ ':path': '/v1/needs?node=g14', authorization: `Bearer ${fresh.token}` })
    stream.on('error', () => {})
    expect((await new Promise<IncomingHttpHeaders>((resolve) => stream.once('response', resolve)))[':status']).toBe(200)
    proc.kill('SIGTERM')
    const [code] = await once(proc, 'close')
    unread.destroy()
    expect(code).toBe(0)
    const log = out()
    expect(log).toContain('"tokenName":"fresh"')
    for (const secret of [console_.token, ace.token, fresh.token, pass, (await readFile(keyFile, 'utf8')).split('\n')[1] as string]) {
      expect(log).not.toContain(secret)
    }
    expect(log).not.toMatch(/Bearer [A-Za-z0-9]/)
    expect(log).toMatch(/"level":20[^\n]*"path":"\/v1\/needs"[^\n]*"msg":"request answered"/)
  } finally {
    proc.kill('SIGKILL')
    await agent.close()
  }
}, 90_000)
