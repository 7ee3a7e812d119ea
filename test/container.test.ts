// What the Containerfile promises, proven without a container engine: the built entrypoint
// (`npm run build`, then `npm start`'s command) serves as uid 65534 from a read-only directory, the
// image's HEALTHCHECK command passes against it, SIGTERM stops it with exit 0, and a refused
// password ends it at once with one line instead of a reconnect loop.

import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { chmod, cp, mkdtemp, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer } from 'node:net'
import { once } from 'node:events'
import { promisify } from 'node:util'
import { runInNewContext } from 'node:vm'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import type { NatsConnection } from 'nats'
import { parse } from 'yaml'
import type { NatsServer } from '../testkit/nats-server.js'
import { START_COMMAND, START_ENV } from '../testkit/start-command.js'
import { fixture, suiteFixture } from './support/service.js'
import { has } from './support/tools.js'

const run = promisify(execFile)
const repo = new URL('..', import.meta.url).pathname
const containerfile = await readFile(join(repo, 'Containerfile'), 'utf8')
/** The image's own stage: what runs. */
const finalStage = containerfile.slice(containerfile.lastIndexOf('\nFROM '))
const pkg = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as { version: string }

const fx = suiteFixture()
let server: NatsServer
let admin: NatsConnection
let root: string
let app: string
const children: ChildProcess[] = []

/**
 * Runs a command as uid/gid 65534 with no supplementary groups, as the image's USER line does; a
 * user other than root cannot switch, and runs it as itself (test/global-setup.ts says so).
 */
function asNobody (args: string[], env: Record<string, string>): ChildProcess {
  const [command, ...rest] = has('root') ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ...args] : args
  const child = spawn(command as string, rest, {
    cwd: app,
    // The image's ENV (START_ENV among it) is every process's there.
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: '/nonexistent', NODE_ENV: 'production', ...START_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  children.push(child)
  return child
}

function exited (child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode)
    else child.once('exit', (code) => resolve(code))
  })
}

function collect (child: ChildProcess): { out: () => string, err: () => string } {
  let out = ''
  let err = ''
  child.stdout?.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr?.on('data', (d: Buffer) => { err += d.toString() })
  return { out: () => out, err: () => err }
}

beforeAll(async () => {
  server = await fx.server()
  admin = await fx.admin(server)
  // The image's /app: package.json, the build of `npm run build`, and the dependencies; root's, read-only.
  root = await mkdtemp(join(tmpdir(), 'mesh-provisioner-image-'))
  app = join(root, 'app')
  await run('npm', ['run', 'build', '--', '--outDir', join(app, 'dist')], { cwd: repo })
  await cp(join(repo, 'package.json'), join(app, 'package.json'))
  await symlink(join(repo, 'node_modules'), join(app, 'node_modules'))
  await run('chmod', ['-R', 'a-w,a+rX', app])
  await chmod(root, 0o755)
}, 120_000)

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  if (root) {
    await run('chmod', ['-R', 'u+w', root])
    await rm(root, { recursive: true, force: true })
  }
})

/** A loopback port free a moment ago: for the built service's HTTP listener, and one nothing listens on. */
async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

describe('the Containerfile', () => {
  test('runs as 65534 with HTTP on every interface, port 8080, a HEALTHCHECK with node only, and the package\'s version', () => {
    const final = finalStage.split('\n').filter((l) => !l.startsWith('#')).join('\n')
    expect(final).toMatch(/^USER 65534:65534$/m)
    expect(final).toMatch(/^EXPOSE 8080$/m)
    expect(final).toMatch(/HTTP_HOST=0\.0\.0\.0/)
    expect(final).toMatch(/HTTP_TOKENS_FILE=\/run\/secrets\/http_tokens/)
    expect(final).toMatch(/^HEALTHCHECK .*\n\s+CMD \["node", "-e", /m)
    expect(final).not.toMatch(/curl|wget/)
    expect(final).toContain(`org.opencontainers.image.version="${pkg.version}"`)
    expect(containerfile).toMatch(/npm ci --omit=dev/)
    expect(containerfile).toMatch(/^RUN npm run build$/m)
  })

  test('runs the service as `npm start` does, its environment and node flags included', () => {
    const cmd = /^CMD (\[.*\])$/m.exec(containerfile.slice(containerfile.lastIndexOf('\nCMD ')))?.[1]
    expect(JSON.parse(cmd ?? 'null')).toEqual(START_COMMAND)
    expect(START_COMMAND).toEqual(['node', '--max-semi-space-size=8', '--initial-old-space-size=128', '--no-allocation-site-pretenuring', 'dist/main.js'])
    expect(START_ENV).toEqual({ MALLOC_ARENA_MAX: '1' })
    for (const [name, value] of Object.entries(START_ENV)) expect(finalStage).toMatch(new RegExp(`^ENV ${name}=${value}$`, 'm'))
  })
})

describe('the image\'s inputs and the compose example', () => {
  const compose = parse(readFileSync(join(repo, 'compose.yaml'), 'utf8')) as { services: Record<string, { ports?: string[], healthcheck?: Record<string, unknown> }> }

  test('Docker and Podman leave out the same files: .dockerignore is .containerignore', async () => {
    const ignored = await readFile(join(repo, '.containerignore'), 'utf8')
    expect(await readFile(join(repo, '.dockerignore'), 'utf8')).toBe(ignored)
    const lines = ignored.split('\n').filter((l) => l !== '' && !l.startsWith('#'))
    expect(lines).toEqual(expect.arrayContaining(['.containerignore', '.dockerignore', 'node_modules', '.cache', 'test']))
    // What the stages copy is not left out.
    for (const input of ['package.json', 'package-lock.json', 'tsconfig.json', 'src']) expect(lines, input).not.toContain(input)
  })

  test('the build stage installs the production dependencies and esbuild alone; the final stage production dependencies only', () => {
    const stages = containerfile.split(/^FROM /m).slice(1)
    const runs = stages.map((stage) => stage.replace(/\\\n/g, ' ').split('\n').filter((l) => l.startsWith('RUN ')).join('\n'))
    // Every npm ci of every stage omits the devDependencies.
    for (const run of runs) for (const ci of run.match(/npm ci[^&]*/g) ?? []) expect(ci).toMatch(/--omit=dev/)
    const selector = /node -p "([^"]+)"/.exec(runs[0] as string)?.[1]
    expect(selector, 'the build stage names its tools from package.json').toBeDefined()
    const devDependencies = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies
    const named = (runInNewContext(selector as string, { require: () => ({ devDependencies }) }) as string).split(' ')
    expect(named.sort()).toEqual(Object.entries(devDependencies).filter(([p]) => p === 'esbuild').map(([p, v]) => `${p}@${v}`).sort())
    expect(named.map((n) => n.slice(0, n.lastIndexOf('@')))).not.toEqual(expect.arrayContaining(['node']))
    expect(runs[0]).toMatch(/npm install --no-save --save-prod --omit=dev /)
    expect(stages.at(-1)).toMatch(/^COPY --from=deps \/app\/node_modules \.\/node_modules$/m)
  })

  test('compose publishes NATS on loopback only', () => {
    const published = Object.entries(compose.services).flatMap(([name, s]) => (s.ports ?? []).map((p) => [name, p]))
    expect(published.filter(([, p]) => /(^|:)4222(:|$)/.test(p as string))).toEqual([['nats', '127.0.0.1:4222:4222']])
  })

  test('the HEALTHCHECK holds under Podman too: compose states the same command and timings, and the Containerfile names --format docker', () => {
    const line = containerfile.slice(containerfile.indexOf('\nHEALTHCHECK ')).replace(/\\\n\s*/, '').split('\n')[1] as string
    const [, options, command] = /^HEALTHCHECK (.*?) CMD (\[.*\])$/.exec(line) ?? []
    const timings = Object.fromEntries((options as string).split(' ').map((o) => o.replace(/^--/, '').replace('-', '_').split('=')))
    expect(compose.services['mesh-provisioner']?.healthcheck).toEqual({ test: ['CMD', ...JSON.parse(command as string)], ...timings, retries: Number(timings['retries']) })
    expect(containerfile).toContain('podman build --format docker')
  })
})

test('the build imports only production dependencies and Node\'s own modules (npm ci --omit=dev suffices)', async () => {
  const { stdout } = await run('grep', ['-rhoE', String.raw`(from|import\() *["'][^"'.][^"']*["']`, join(app, 'dist')])
  const packages = new Set(stdout.split('\n').filter(Boolean).map((l) => {
    const spec = (/["']([^"']+)["']/.exec(l) as RegExpExecArray)[1] as string
    return spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0] as string
  }))
  expect((await run('find', [join(app, 'dist'), '-name', '*.test.*'])).stdout).toBe('')
  const builtins = new Set((await import('node:module')).builtinModules)
  const wanted = [...packages].filter((p) => !p.startsWith('node:') && !builtins.has(p))
  expect(wanted.length).toBeGreaterThan(3)
  const deps = Object.keys((JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies)
  expect(wanted.filter((p) => !deps.includes(p))).toEqual([])
})

test('the build holds typebox in one bundled module (src/vendor/typebox.ts): no module of it imports the library\'s ~540', async () => {
  const vendor = await readFile(join(app, 'dist', 'vendor', 'typebox.js'), 'utf8')
  expect(vendor).toContain('Compile')
  // grep exits 1 when nothing matches; any other failure is the test's.
  const imports = await run('grep', ['-rlE', String.raw`(from|import\() *["']typebox`, join(app, 'dist')]).then(({ stdout }) => stdout, (err: { code?: number }) => {
    if (err.code === 1) return ''
    throw err
  })
  expect(imports).toBe('')
})

test('the built gateway loads neither ajv nor fast-json-stringify\'s compiler: the domain judges its routes (SCHEMA_COMPILERS)', async () => {
  const script = `
    import { createRequire } from 'node:module'
    import { pino } from 'pino'
    import { buildApp } from './dist/http/app.js'
    import { createMetrics } from './dist/metrics.js'
    const views = { status: () => ({}), connected: () => true }
    const app = await buildApp({ provisioning: {}, views, writer: { last: undefined }, metrics: createMetrics(() => views, false), log: pino({ level: 'silent' }), corsOrigins: [], version: '0.0.0', maxAnswerBytes: () => 1 << 20, verb: () => 'serving' })
    await app.ready()
    console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)))
    await app.close()`
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: app })
  const loaded = JSON.parse(stdout) as string[]
  expect(loaded.some((path) => path.includes('/node_modules/fastify/'))).toBe(true)
  expect(loaded.filter((path) => /\/node_modules\/(ajv|@fastify\/ajv-compiler|@fastify\/fast-json-stringify-compiler)\//.test(path))).toEqual([])
})

describe('the built entrypoint as uid 65534 from a read-only directory', () => {
  let service: ChildProcess
  let output: ReturnType<typeof collect>
  let port: number

  beforeAll(async () => {
    port = await freePort()
    const tokens = join(root, 'http-tokens.json')
    await writeFile(tokens, '{"tokens":[]}', { mode: 0o444 })
    service = asNobody([...START_COMMAND], { ...server.serviceEnv(), HTTP_HOST: '0.0.0.0', HTTP_PORT: String(port), HTTP_TOKENS_FILE: tokens })
    output = collect(service)
  })

  test.runIf(has('root'))('runs as 65534 and cannot write its directory', async () => {
    // setpriv changes the ids and then becomes node: read the status once it is node (by its
    // executable: Node 24 names its main thread "MainThread", so the status's Name will not do).
    const status = await vi.waitFor(async () => {
      expect(await readlink(`/proc/${service.pid as number}/exe`), 'setpriv to exec node').toMatch(/\/node$/)
      return await readFile(`/proc/${service.pid as number}/status`, 'utf8')
    }, { timeout: 10_000, interval: 50 })
    expect(status).toMatch(/^Uid:\s+65534\s+65534\s+65534\s+65534$/m)
    const probe = asNobody(['node', '-e', "require('fs').writeFileSync('probe', 'x')"], {})
    expect(await exited(probe)).not.toBe(0)
  })

  test('serves /healthz and the verb', async () => {
    await vi.waitFor(async () => {
      expect(await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status), `/healthz to answer; output:\n${output.out()}${output.err()}`).toBe(200)
    }, { timeout: 30_000, interval: 100 })
    const reply = await vi.waitFor(async () => {
      const msg = await admin.request('mesh-provisioner.provisioning', '{"what":"registry"}', { timeout: 5000 })
      expect(msg.headers?.get('Nats-Service-Error-Code'), 'a registry answer on the bus').toBeUndefined()
      return msg
    }, { timeout: 30_000, interval: 100 })
    expect(reply.json()).toMatchObject({ what: 'registry', bucket: 'mesh-provisioner_registry', stale: false })
    for (const path of ['/readyz', '/openapi.json', '/docs/']) {
      expect((await fetch(`http://127.0.0.1:${port}${path}`)).status, path).toBe(200)
    }
  })

  test('the image\'s HEALTHCHECK command passes against it, and fails when nothing listens', async () => {
    const script = /CMD \["node", "-e", "(.*)"\]/.exec(containerfile.slice(containerfile.indexOf('HEALTHCHECK')))?.[1]
    expect(script).toBeDefined()
    const code = JSON.parse(`"${script as string}"`) as string
    expect(await exited(asNobody(['node', '-e', code], { HTTP_PORT: String(port) }))).toBe(0)
    expect(await exited(asNobody(['node', '-e', code], { HTTP_PORT: String(await freePort()) }))).toBe(1)
  })

  test('SIGTERM stops it gracefully with exit 0', async () => {
    service.kill('SIGTERM')
    // A stop that hangs never exits: the test's timeout is the bound.
    expect(await exited(service)).toBe(0)
  })
})

describe('SIGTERM while NATS is down', () => {
  test('still stops with exit 0 within the grace period', async () => {
    const own = await fixture().server()
    const port = await freePort()
    const child = asNobody([...START_COMMAND], { ...own.serviceEnv(), HTTP_PORT: String(port), LOG_LEVEL: 'silent' })
    const readyz = async (): Promise<number> => await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0)
    await expect.poll(readyz, { timeout: 30_000 }).toBe(200)
    await own.kill()
    await expect.poll(readyz, { timeout: 10_000 }).toBe(503)
    child.kill('SIGTERM')
    // A stop that hangs never exits: the test's timeout is the bound.
    expect(await exited(child)).toBe(0)
  })
})

describe('a refused password', () => {
  test('is one clear line on stderr and exit 1, not a reconnect loop', async () => {
    const secret = join(root, 'wrong-password')
    await writeFile(secret, 'not-the-password\n', { mode: 0o444 })
    const child = asNobody([...START_COMMAND], { ...server.serviceEnv(), NATS_PASSWORD: '', NATS_PASSWORD_FILE: secret, HTTP_PORT: '0', LOG_LEVEL: 'silent' })
    const output = collect(child)
    // A reconnect loop never exits: the test's timeout is the bound. At 'close', not 'exit', the
    // output is whole (the pipes may still hold the last line at 'exit').
    const [code] = await once(child, 'close') as [number | null]
    expect(code).toBe(1)
    const lines = output.err().trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^mesh-provisioner: NATS at nats:\/\/127\.0\.0\.1:\d+ refused the credentials .*NATS_USER\/NATS_PASSWORD/)
  })
})
