// `npm run demo` as a user runs it: started from a shell and stopped by a signal to the process the
// user started (`kill $!` sends SIGTERM to npm; Ctrl-C sends SIGINT to the terminal's whole process
// group), it leaves no process and no temporary store behind, whatever the signal, whenever it
// comes and however often. Meanwhile its provisioner clients move the mesh, unless told `--still`.

import { execFile } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { describe, test, vi, type TestContext } from 'vitest'
import { newToken } from '../src/settings/tokens-file.js'
import { VERSION } from '../src/version.js'
import { selfSigned } from './support/certificate.js'
import { commandOf, descendants, runDemo } from './support/process.js'
import { request } from './support/http.js'

interface Demo {
  proc: ReturnType<typeof runDemo>['proc']
  out: () => string
  exited: Promise<unknown[]>
  /** Every process below npm once the demo is up: nats-server among them. */
  tree: number[]
  /** The test's own expect (expect.poll needs it in concurrent tests). */
  expect: TestContext['expect']
}

/** Starts the demo, killed when the test ends whatever happened (the test's own hook: the tests run concurrently). */
function start ({ onTestFinished, expect }: TestContext, args: readonly string[] = [], env: Record<string, string> = {}): Demo {
  const { proc, out } = runDemo(args, env)
  const exited = once(proc, 'exit')
  const demo: Demo = { proc, out, exited, tree: [], expect }
  onTestFinished(() => {
    for (const pid of [...new Set([...demo.tree, ...descendants(proc.pid as number)])].reverse()) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {}
    }
    try {
      process.kill(-(proc.pid as number), 'SIGKILL')
    } catch {}
  })
  return demo
}

/** Waits for the demo's whole first screen, and keeps the processes below npm. */
async function untilUp (demo: Demo): Promise<{ url: string, store: string, pid: number }> {
  const { expect } = demo
  await expect.poll(demo.out, { timeout: 60_000 }).toMatch(/kill -HUP \d+ /)
  demo.tree = descendants(demo.proc.pid as number)
  expect(demo.tree.map(commandOf)).toContainEqual(expect.stringMatching(/nats-server -c /))
  const text = demo.out()
  return {
    url: /the mesh at a glance is at (https?:\/\/127\.0\.0\.1:\d+)\/\n/.exec(text)?.[1] as string,
    store: /\(store (\/\S+)\)/.exec(text)?.[1] as string,
    pid: Number(/kill -HUP (\d+) /.exec(text)?.[1])
  }
}

/** npm's exit, within the demo's own bound on its stop (10 s) and a margin. */
async function exitOf (demo: Demo): Promise<unknown[]> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`npm run demo did not exit within 20 s of the signal:\n${demo.out()}`)), 20_000) })
  try {
    return await Promise.race([demo.exited, late])
  } finally {
    clearTimeout(timer)
  }
}

/** The demo has exited and every process it started is gone, and so is the store. */
async function stoppedWhole (demo: Demo, store: string): Promise<void> {
  const { expect } = demo
  const [code] = await exitOf(demo)
  await expect.poll(() => demo.tree.filter((pid) => commandOf(pid) !== undefined).map(commandOf), { timeout: 15_000 }).toEqual([])
  expect(existsSync(store), store).toBe(false)
  // npm's exit may come before the pipes have given up the demo's last line.
  await expect.poll(demo.out, { timeout: 10_000 }).toContain(`stopped: the service, its NATS and ${store} are gone\n`)
  expect(code).toBe(0)
}

/**
 * The second signal, 50 ms after the first, while the demo (`pid`) is still stopping. A stop done
 * within the 50 ms leaves npm alone, and npm, its child gone, takes a signal by its default: it
 * dies of it (exit code null).
 */
async function whileStopping (pid: number, send: () => void): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 50))
  if (commandOf(pid) !== undefined) send()
}

const run = promisify(execFile)

const etagOfNodes = async (url: string): Promise<unknown> => (await request(`${url}/v1/nodes`)).headers['etag']

describe.concurrent('npm run demo', { timeout: 90_000 }, () => {
  test('`kill $!` (SIGTERM to npm), twice, stops it whole; before, it prints the page first and its clients move the mesh', async (ctx) => {
    const { expect } = ctx
    const demo = start(ctx)
    const { url, store, pid } = await untilUp(demo)
    const printed = demo.out().split('\n').filter((line) => line !== '' && !line.startsWith('> '))
    expect(printed[0]).toBe(`mesh-provisioner ${VERSION}: the mesh at a glance is at ${url}/`)
    expect(demo.out()).toContain('every 3 s (npm run demo -- --still: none)')
    const before = await etagOfNodes(url)
    await expect.poll(async () => await etagOfNodes(url), { timeout: 10_000, interval: 500 }).not.toBe(before)
    demo.proc.kill('SIGTERM')
    await whileStopping(pid, () => demo.proc.kill('SIGTERM'))
    await stoppedWhole(demo, store)
  })

  test('Ctrl-C (SIGINT to the whole process group), twice, stops it whole; `--still` keeps the mesh still, and the printed pid takes SIGHUP', async (ctx) => {
    const { expect } = ctx
    const demo = start(ctx, ['--still'])
    const { url, store, pid } = await untilUp(demo)
    expect(demo.out()).toContain('The mesh is still (--still): nothing writes to it but you.')
    expect(commandOf(pid)).toMatch(/^node .*scripts\/demo\.ts --still$/)
    expect(demo.tree).toContain(pid)
    process.kill(pid, 'SIGHUP')
    await expect.poll(demo.out, { timeout: 10_000 }).toContain('SIGHUP: reading the tokens file and the certificate again\n')
    const before = await etagOfNodes(url)
    // Longer than a turn of the clients: nothing moved, and the HUP stopped nothing.
    await new Promise((resolve) => setTimeout(resolve, 4000))
    expect(await etagOfNodes(url)).toBe(before)
    expect((await request(`${url}/readyz`)).statusCode).toBe(200)
    process.kill(-(demo.proc.pid as number), 'SIGINT')
    await whileStopping(pid, () => {
      try {
        process.kill(-(demo.proc.pid as number), 'SIGINT')
      } catch {}
    })
    await stoppedWhole(demo, store)
  })

  test('SIGINT to npm alone stops it whole', async (ctx) => {
    const demo = start(ctx)
    const { store } = await untilUp(demo)
    demo.proc.kill('SIGINT')
    await stoppedWhole(demo, store)
  })

  test('npm killed outright during the start (no signal to forward): the demo does not outlive it, and stops what the start opened, the store included', async (ctx) => {
    const { expect } = ctx
    const demo = start(ctx)
    // nats-server is up, the service not yet: the store's folder is in nats-server's command line.
    const conf = await vi.waitFor(() => {
      demo.tree = descendants(demo.proc.pid as number)
      const found = demo.tree.map((p) => /nats-server -c (\S+)/.exec(commandOf(p) ?? '')?.[1]).find((c) => c !== undefined)
      expect(found, 'nats-server started').toBeDefined()
      return found as string
    }, { timeout: 60_000, interval: 20 })
    expect(demo.out()).not.toContain('kill -HUP')
    demo.proc.kill('SIGKILL')
    await expect.poll(() => demo.tree.filter((p) => commandOf(p) !== undefined).map(commandOf), { timeout: 20_000 }).toEqual([])
    expect(existsSync(dirname(conf)), conf).toBe(false)
  })

  test('with tokens and a certificate (docs/access.md), the curl lines it prints answer as printed, given the token', async (ctx) => {
    const { expect } = ctx
    // A space in the path, as a person's folders may have: the printed line must quote it.
    const dir = await mkdtemp(join(tmpdir(), 'mesh-provisioner demo tls-'))
    ctx.onTestFinished(async () => { await rm(dir, { recursive: true, force: true }) })
    const { certFile, keyFile } = selfSigned(dir)
    const { token, entry } = newToken('console', '*', false)
    const tokensFile = join(dir, 'tokens.json')
    await writeFile(tokensFile, JSON.stringify({ tokens: [entry] }))
    const demo = start(ctx, ['--still'], { HTTP_TOKENS_FILE: tokensFile, HTTP_TLS_CERT: certFile, HTTP_TLS_KEY: keyFile })
    const { url, store } = await untilUp(demo)
    expect(url).toMatch(/^https:/)
    // The line as a person copies it, run by a shell with the token they were given; without it, refused.
    const line = /^ {2}(curl -s .*\/v1\/nodes')/m.exec(demo.out())?.[1] as string
    expect(line).toContain('-H "Authorization: Bearer $TOKEN"')
    const { stdout } = await run('bash', ['-c', line], { env: { ...process.env, TOKEN: token } })
    expect(JSON.parse(stdout)).toMatchObject({ what: 'nodes', total: 4 })
    const { stdout: refused } = await run('bash', ['-c', line], { env: { ...process.env, TOKEN: '' } })
    expect(JSON.parse(refused)).toMatchObject({ error: { code: 'UNAUTHORIZED' } })
    demo.proc.kill('SIGTERM')
    await stoppedWhole(demo, store)
  })
})
