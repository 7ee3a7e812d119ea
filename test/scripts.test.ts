// The command line helpers as a user meets them: `npm run ask` says in one line what keeps it from
// an answer, and `npm run token` explains itself, keeps a tokens file, and names the quoting a
// shell-expanded `*` needed.

import { execFile } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { findToken } from '../src/http/tokens.js'
import { parseTokens } from '../src/settings/tokens-file.js'
import { NatsServer } from '../testkit/nats-server.js'
import { compiledScript } from './support/process.js'
import { suiteFixture } from './support/service.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

interface Ran { code: number, stdout: string, stderr: string }

/** Runs scripts/<script>.ts, compiled, as `npm run <script> -- …args` does, with only `env` (and PATH). */
async function run (script: string, args: readonly string[], env: Record<string, string> = {}): Promise<Ran> {
  const js = compiledScript(`scripts/${script}`)
  const child = execFile(process.execPath, [js.file, ...args], { cwd: ROOT, env: { PATH: process.env['PATH'] ?? '', ...js.env, ...env }, timeout: 20_000 })
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (d: Buffer) => { stdout += d.toString() })
  child.stderr?.on('data', (d: Buffer) => { stderr += d.toString() })
  const [code] = await once(child, 'close') as [number]
  return { code, stdout, stderr }
}

async function closedPort (): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}

describe('npm run ask', { timeout: 60_000 }, () => {
  const fx = suiteFixture()
  const ASK = ['{"what":"registry","kind":"secret"}']

  test('with nothing listening at NATS_URL: one line saying so and what to do, exit 1', async () => {
    const port = await closedPort()
    const ran = await run('ask', ASK, { NATS_URL: `nats://127.0.0.1:${port}` })
    expect(ran).toEqual({ code: 1, stdout: '', stderr: `ask: nothing answers at NATS_URL=nats://127.0.0.1:${port} (CONNECTION_REFUSED); set NATS_URL to where NATS listens (npm run demo prints the one to use)\n` })
  })

  test('without NATS_URL: one line naming the default it tried', async () => {
    const ran = await run('ask', ASK)
    // Whatever listens on this machine's 4222, the answer is one line (or an answer, where a service runs there).
    if (ran.code !== 0) expect(ran.stderr).toMatch(/^ask: [^\n]* at NATS_URL=nats:\/\/127\.0\.0\.1:4222 \(NATS_URL is not set: the default\)[^\n]*\(npm run demo prints the one to use\)\n$/)
  })

  test('a NATS without the service, then with it: one line, then the answer', async () => {
    const server = await fx.server()
    const { user, pass } = NatsServer.credentials('admin')
    const env = { NATS_URL: server.url, NATS_USER: user, NATS_PASSWORD: pass }
    expect(await run('ask', ASK, env)).toEqual({ code: 1, stdout: '', stderr: `ask: no mesh-provisioner answers mesh-provisioner.provisioning at NATS_URL=${server.url}; set NATS_URL to its NATS (npm run demo prints the one to use)\n` })
    await fx.service(server)
    // The verb is served once the views are read.
    const served = await vi.waitFor(async () => {
      const ran = await run('ask', ASK, env)
      expect(ran.code, ran.stderr).toBe(0)
      return ran
    }, { timeout: 20_000, interval: 200 })
    expect(JSON.parse(served.stdout)).toMatchObject({ what: 'registry', entries: [{ key: 'secret' }] })
  })

  test('no request: the usage, exit 2', async () => {
    const ran = await run('ask', [])
    expect(ran.code).toBe(2)
    expect(ran.stderr).toMatch(/^ask: usage: .*npm run ask -- '\{"what":"needs","node":"ace"\}'/)
  })
})

describe('npm run token', { timeout: 60_000 }, () => {
  let dir: string
  beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner-token-')) })
  afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

  test('--help: the usage, every option, exit 0', async () => {
    const ran = await run('token', ['--help'])
    expect(ran.code).toBe(0)
    expect(ran.stdout).toMatch(/^usage: npm run token -- --name <who> --nodes <"\*" or node,node,...> \[--metrics\] \[--file <tokens file>\]\n/)
    for (const option of ['--name', '--nodes', '--metrics', '--file']) expect(ran.stdout).toContain(`\n  ${option} `)
  })

  test('a * the shell expanded: names the quoting, exit 2', async () => {
    // What `npm run token -- --name console --nodes *` hands over in a folder of three files.
    const ran = await run('token', ['--name', 'console', '--nodes', 'a.txt', 'b.txt', 'c.txt'])
    expect(ran).toEqual({
      code: 2,
      stdout: '',
      stderr: 'token: unexpected arguments \'b.txt\', \'c.txt\': an unquoted * becomes the names of the files here; write --nodes \'*\' (quoted)\n' +
        'usage: npm run token -- --name <who> --nodes <"*" or node,node,...> [--metrics] [--file <tokens file>]   (--help says more)\n'
    })
  })

  test('--file: creates the tokens file (private), adds to it, and refuses a name twice leaving it whole', async () => {
    const file = join(dir, 'tokens.json')
    const first = await run('token', ['--name', 'console', '--nodes', '*', '--metrics', '--file', file])
    expect(first.code, first.stderr).toBe(0)
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    const second = await run('token', ['--name', 'ace', '--nodes', 'ace,g14', '--file', file])
    expect(second.code, second.stderr).toBe(0)
    expect(second.stdout).toContain(`${file} now holds 2 tokens. Start the service with HTTP_TOKENS_FILE=${file}, or send a running one SIGHUP`)
    const tokenOf = (ran: Ran): string => ran.stdout.split('\n')[1]?.trim() as string
    const held = await readFile(file, 'utf8')
    const tokens = parseTokens(held, file)
    expect(tokens.map((t) => [t.name, t.nodes, t.metrics])).toEqual([['console', '*', true], ['ace', ['ace', 'g14'], false]])
    expect(findToken(tokens, tokenOf(first))?.name).toBe('console')
    expect(findToken(tokens, tokenOf(second))?.name).toBe('ace')
    expect(held).not.toContain(tokenOf(first))

    const again = await run('token', ['--name', 'ace', '--nodes', 'ace', '--file', file])
    expect(again.code).toBe(2)
    expect(again.stderr.split('\n')[0]).toBe(`token: ${file}: token "ace" is named twice (#2 and #3); give each token its own name`)
    expect(await readFile(file, 'utf8')).toBe(held)
  })

  test('--file in a folder not there yet (a fresh clone\'s secrets/) makes the folder; a path it cannot write is said without the usage', async () => {
    const file = join(dir, 'secrets', 'http-tokens.json')
    const made = await run('token', ['--name', 'console', '--nodes', '*', '--file', file])
    expect(made.code, made.stderr).toBe(0)
    expect(parseTokens(await readFile(file, 'utf8'), file).map((t) => t.name)).toEqual(['console'])
    const under = join(file, 'tokens.json')
    const refused = await run('token', ['--name', 'ace', '--nodes', 'ace', '--file', under])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/^token: [A-Z]+: /)
    expect(refused.stderr).toContain(file)
    expect(refused.stderr).not.toContain('usage:')
  })
})
