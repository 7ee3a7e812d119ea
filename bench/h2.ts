// HTTP/2 with TLS (issue 21): the gateway against a bare fastify `http2` server with TLS answering
// the same bytes, both loaded by h2load (Debian's nghttp2-client) with 64 streams over 4 sessions.

import { execFile } from 'node:child_process'
import { mkdir, readFile } from 'node:fs/promises'
import { connect } from 'node:http2'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { MeshServer } from './handed.js'
import { Child } from './child.js'
import { FLOOR_SUBJECT, alternate, log, rounds, seconds, startServiceChild } from './measure.js'
import type { Row } from './table.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('..', import.meta.url))
const SESSIONS = 4
const STREAMS_PER_SESSION = 16

/** A self-signed certificate for 127.0.0.1, made once into .bench-tmp. */
async function certificate (): Promise<{ cert: string, key: string }> {
  const dir = join(root, '.bench-tmp', 'tls')
  await mkdir(dir, { recursive: true })
  const cert = join(dir, 'cert.pem')
  const key = join(dir, 'key.pem')
  await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'])
  return { cert, key }
}

/** One GET over HTTP/2 (a certificate of our own: not verified). */
async function h2Get (url: string): Promise<{ status: number, headers: Record<string, string>, body: string }> {
  const u = new URL(url)
  const session = connect(u.origin, { rejectUnauthorized: false })
  try {
    return await new Promise((resolve, reject) => {
      session.once('error', reject)
      const req = session.request({ ':path': `${u.pathname}${u.search}` })
      let body = ''
      let headers: Record<string, string> = {}
      let status = 0
      req.setEncoding('utf8')
      req.on('response', (h) => {
        status = Number(h[':status'])
        headers = Object.fromEntries(Object.entries(h).filter(([name, v]) => !name.startsWith(':') && typeof v === 'string')) as Record<string, string>
      })
      req.on('data', (chunk: string) => { body += chunk })
      req.once('end', () => resolve({ status, headers, body }))
      req.once('error', reject)
    })
  } finally {
    session.close()
  }
}

/** req/s of `url` under h2load; refuses a run with any failed or non-2xx request. */
async function h2Load (url: string): Promise<number> {
  const warmup = Math.max(0, Math.round(seconds / 5))
  const { stdout } = await run('h2load', ['-c', String(SESSIONS), '-m', String(STREAMS_PER_SESSION), '-D', seconds >= 1 ? String(Math.round(seconds)) : `${Math.round(seconds * 1000)}ms`, ...(warmup > 0 ? [`--warm-up-time=${warmup}`] : []), url], { maxBuffer: 1 << 20 })
  const rate = /finished in [\d.]+\w*, ([\d.]+) req\/s/.exec(stdout)?.[1]
  const failed = Number(/(\d+) failed/.exec(stdout)?.[1] ?? NaN)
  const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(stdout)
  if (rate === undefined || failed !== 0 || codes === null || Number(codes[1]) === 0 || codes.slice(2).some((c) => Number(c) !== 0)) {
    throw new Error(`h2load of ${url} did not answer 2xx throughout:\n${stdout.split('\n').filter((l) => /finished|requests:|status codes|protocol|error/i.test(l)).join('\n')}`)
  }
  return Number(rate)
}

/** The row: the gateway serving `path` over HTTP/2 against the floor serving what it answered. */
export async function h2Rows (server: MeshServer, path: string): Promise<Row[]> {
  const what = `HTTP/2 with TLS: needs of one node and module, req/s, ${SESSIONS * STREAMS_PER_SESSION} streams over ${SESSIONS} sessions; floor: bare fastify http2 with TLS answering the same bytes`
  const missing = (why: string): Row[] => [{ what, missing: why, unit: 'req/s', goal: { higher: 0.8 } }]
  if (await run('h2load', ['--version']).then(() => false, () => true)) return missing('h2load is not installed (Debian: apt-get install nghttp2-client)')
  const tls = await certificate()
  const service = await startServiceChild(server, { HTTP_TLS_CERT: tls.cert, HTTP_TLS_KEY: tls.key })
  const floor = Child.start('serve', ['floor'], server.adminEnv())
  try {
    const url = service.ready.url.replace('http://', 'https://')
    // The floor answers the bytes and headers the gateway answered over HTTP/2.
    const answered = await h2Get(`${url}${path}`).catch((err: Error) => err)
    if (answered instanceof Error || answered.status !== 200) return missing(`GET ${path} over HTTP/2 with TLS: ${answered instanceof Error ? answered.message : `answers ${answered.status}`}`)
    const { body, headers } = answered
    delete headers['date']
    delete headers['content-length']
    floor.send({ type: 'floor', body, headers, subject: FLOOR_SUBJECT, tls: { cert: await readFile(tls.cert, 'utf8'), key: await readFile(tls.key, 'utf8') } })
    const floorUrl = (await floor.next('floor')).url
    log('HTTP/2 throughput')
    const [svc, bare] = await alternate(async () => await h2Load(`${url}${path}`), async () => await h2Load(`${floorUrl}/floor`), rounds, true)
    return [{ what, service: svc, floor: bare, unit: 'req/s', goal: { higher: 0.8 } }]
  } finally {
    await floor.stop()
    await service.child.stop()
  }
}
