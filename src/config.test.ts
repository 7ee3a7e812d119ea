import { describe, expect, test } from 'vitest'
import { loadConfig, type Env } from './config.js'

const files: Record<string, string> = {
  '/run/secrets/pass': 's3cret\n',
  '/run/secrets/token': 't0ken',
  '/run/secrets/empty': '',
  '/etc/nats/user.creds': 'creds',
  '/etc/tls/ca.pem': 'ca',
  '/etc/tls/cert.pem': 'cert',
  '/etc/tls/key.pem': 'key',
  '/etc/mp/domains.json': '[{"kinds":["secret"],"module":"mesh-vault","verb":"mesh-vault.secret"}]',
  '/etc/mp/tokens.json': `{"tokens":[{"name":"console","sha256":"${'a'.repeat(64)}","nodes":"*","metrics":true}]}`,
  '/etc/mp/bad-tokens.json': `{"tokens":[{"name":"console","sha256":"${'a'.repeat(64)}","nodes":"*"},{"name":"ace","sha256":"ABC","nodes":["ace"]}]}`,
  '/etc/mp/twice.json': '[{"kinds":["a"],"module":"m","verb":"v"},{"kinds":["a"],"module":"n","verb":"w"}]'
}
const readText = (path: string): string => {
  if (path in files) return files[path] as string
  throw Object.assign(new Error('no such file'), { code: 'ENOENT' })
}
const load = (env: Env) => loadConfig(env, readText)

test('defaults (docs/running.md)', () => {
  const c = load({})
  expect(c.nats).toEqual({ servers: ['nats://127.0.0.1:4222'] })
  expect(c.http).toEqual({ host: '127.0.0.1', port: 8080, corsOrigins: [], maxStreams: 1000, maxWaits: 1000 })
  expect(c.subject).toBe('mesh-provisioner.provisioning')
  expect(c.registry).toMatchObject({ intervalMs: 3_600_000, createBucket: true, replicas: 1 })
  expect(c.registry.domains.length).toBeGreaterThan(5)
  expect(c.logLevel).toBe('info')
  expect(Object.isFrozen(c.nats)).toBe(true)
})

describe('reads', () => {
  test.each([
    [{ NATS_URL: 'nats://a:4222, tls://b:4223,c' }, (c: ReturnType<typeof load>) => expect(c.nats.servers).toEqual(['nats://a:4222', 'tls://b:4223', 'c'])],
    [{ NATS_USER: 'svc', NATS_PASSWORD_FILE: '/run/secrets/pass' }, (c: ReturnType<typeof load>) => expect(c.nats).toMatchObject({ user: 'svc', pass: 's3cret' })],
    [{ NATS_USER: 'svc', NATS_PASSWORD: 'p' }, (c: ReturnType<typeof load>) => expect(c.nats).toMatchObject({ user: 'svc', pass: 'p' })],
    [{ NATS_TOKEN_FILE: '/run/secrets/token' }, (c: ReturnType<typeof load>) => expect(c.nats.token).toBe('t0ken')],
    [{ NATS_CREDS: '/etc/nats/user.creds' }, (c: ReturnType<typeof load>) => expect(c.nats.creds).toBe('/etc/nats/user.creds')],
    [{ NATS_TLS_CA: '/etc/tls/ca.pem', NATS_TLS_CERT: '/etc/tls/cert.pem', NATS_TLS_KEY: '/etc/tls/key.pem' }, (c: ReturnType<typeof load>) => expect(c.nats.tls).toEqual({ caFile: '/etc/tls/ca.pem', certFile: '/etc/tls/cert.pem', keyFile: '/etc/tls/key.pem' })],
    [{ HTTP_HOST: '0.0.0.0', HTTP_PORT: '0', HTTP_AUTH: 'none' }, (c: ReturnType<typeof load>) => expect(c.http).toEqual({ host: '0.0.0.0', port: 0, corsOrigins: [], maxStreams: 1000, maxWaits: 1000 })],
    [{ HTTP_MAX_STREAMS: '20000' }, (c: ReturnType<typeof load>) => expect(c.http.maxStreams).toBe(20_000)],
    [{ HTTP_MAX_WAITS: '5' }, (c: ReturnType<typeof load>) => expect(c.http.maxWaits).toBe(5)],
    [{ HTTP_HOST: '0.0.0.0', HTTP_TOKENS_FILE: '/etc/mp/tokens.json' }, (c: ReturnType<typeof load>) => expect(c.http).toMatchObject({ tokensFile: '/etc/mp/tokens.json', tokens: [{ name: 'console', sha256: 'a'.repeat(64), nodes: '*', metrics: true }] })],
    [{ REGISTRY_INTERVAL: '90s' }, (c: ReturnType<typeof load>) => expect(c.registry.intervalMs).toBe(90_000)],
    [{ REGISTRY_INTERVAL: '30' }, (c: ReturnType<typeof load>) => expect(c.registry.intervalMs).toBe(30_000)],
    [{ REGISTRY_DOMAINS_FILE: '/etc/mp/domains.json' }, (c: ReturnType<typeof load>) => expect(c.registry.domains).toHaveLength(1)],
    [{ REGISTRY_CREATE_BUCKET: 'false', REGISTRY_REPLICAS: '3' }, (c: ReturnType<typeof load>) => expect(c.registry).toMatchObject({ createBucket: false, replicas: 3 })],
    [{ PROVISIONING_SUBJECT: 'lab.mesh-provisioner.provisioning' }, (c: ReturnType<typeof load>) => expect(c.subject).toBe('lab.mesh-provisioner.provisioning')],
    [{ CORS_ORIGINS: 'https://console.example, http://localhost:5173' }, (c: ReturnType<typeof load>) => expect(c.http.corsOrigins).toEqual(['https://console.example', 'http://localhost:5173'])],
    [{ LOG_LEVEL: 'debug' }, (c: ReturnType<typeof load>) => expect(c.logLevel).toBe('debug')],
    [{}, (c: ReturnType<typeof load>) => expect(c.metrics).toEqual({ nodeLastWrite: true })],
    [{ METRICS_NODE_LAST_WRITE: 'false' }, (c: ReturnType<typeof load>) => expect(c.metrics).toEqual({ nodeLastWrite: false })]
  ])('%j', (env, check) => check(load(env)))
})

describe('a malformed setting is one line naming it and what it takes', () => {
  test.each([
    [{ NATS_URL: 'http://x/y' }, 'NATS_URL="http://x/y": "http://x/y" is not a server URL; it takes comma-separated URLs like nats://127.0.0.1:4222'],
    [{ NATS_URL: 'nats://svc:hunter2@nats:4222' }, 'NATS_URL: a server URL holds a user and password (user:password@); set NATS_USER and NATS_PASSWORD_FILE beside the address instead'],
    [{ NATS_URL: 'nats://a:4222,hunter2@b:4222' }, 'NATS_URL: a server URL holds a token (token@); set NATS_TOKEN_FILE beside the address instead'],
    [{ NATS_URL: ' , ' }, 'NATS_URL=",": it takes comma-separated server URLs like nats://127.0.0.1:4222'],
    [{ HTTP_PORT: 'eighty' }, 'HTTP_PORT="eighty": it takes a port number from 0 to 65535 (0 picks a free one)'],
    [{ HTTP_PORT: '70000' }, 'HTTP_PORT="70000": it takes a port number from 0 to 65535 (0 picks a free one)'],
    [{ HTTP_MAX_STREAMS: '0' }, 'HTTP_MAX_STREAMS="0": it takes a whole number of open event streams from 1 to 999999'],
    [{ HTTP_MAX_STREAMS: 'many' }, 'HTTP_MAX_STREAMS="many": it takes a whole number of open event streams from 1 to 999999'],
    [{ HTTP_MAX_WAITS: '0' }, 'HTTP_MAX_WAITS="0": it takes a whole number of requests held by wait from 1 to 999999'],
    [{ HTTP_MAX_WAITS: '1e3' }, 'HTTP_MAX_WAITS="1e3": it takes a whole number of requests held by wait from 1 to 999999'],
    [{ REGISTRY_INTERVAL: 'hourly' }, 'REGISTRY_INTERVAL="hourly": it takes a duration of at least 1s, like 1h, 30m or 90s (a bare number is seconds)'],
    [{ REGISTRY_INTERVAL: '10ms' }, 'REGISTRY_INTERVAL="10ms": it takes a duration of at least 1s, like 1h, 30m or 90s (a bare number is seconds)'],
    [{ NATS_USER: 'svc' }, 'NATS_PASSWORD: user and password go together; set both NATS_USER and NATS_PASSWORD (or NATS_PASSWORD_FILE)'],
    [{ NATS_PASSWORD: 'p' }, 'NATS_USER: user and password go together; set both NATS_USER and NATS_PASSWORD (or NATS_PASSWORD_FILE)'],
    [{ NATS_PASSWORD: 'p', NATS_PASSWORD_FILE: '/run/secrets/pass', NATS_USER: 'u' }, 'NATS_PASSWORD_FILE: NATS_PASSWORD is set too; set one of NATS_PASSWORD and NATS_PASSWORD_FILE'],
    [{ NATS_TOKEN_FILE: '/nope' }, 'NATS_TOKEN_FILE="/nope": cannot read that file (ENOENT); it takes the path of a readable file'],
    [{ NATS_TOKEN_FILE: '/run/secrets/empty' }, 'NATS_TOKEN_FILE="/run/secrets/empty": that file is empty; it takes a file holding the secret'],
    [{ NATS_TOKEN: 't', NATS_CREDS: '/etc/nats/user.creds' }, 'NATS_CREDS: NATS_TOKEN and NATS_CREDS are both set; the service signs in one way: set one of them'],
    [{ NATS_CREDS: '/nope.creds' }, 'NATS_CREDS="/nope.creds": cannot read that file (ENOENT); it takes the path of a readable file'],
    [{ NATS_TLS_CERT: '/etc/tls/cert.pem' }, 'NATS_TLS_KEY: a client certificate and its key go together; set both NATS_TLS_CERT and NATS_TLS_KEY'],
    [{ NATS_TLS_CA: '/nope.pem' }, 'NATS_TLS_CA="/nope.pem": cannot read that file (ENOENT); it takes the path of a readable file'],
    [{ PROVISIONING_SUBJECT: 'mesh.>' }, 'PROVISIONING_SUBJECT="mesh.>": it takes a NATS subject without wildcards, like mesh-provisioner.provisioning'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL="loud": it takes one of fatal, error, warn, info, debug, trace, silent'],
    [{ REGISTRY_REPLICAS: '7' }, 'REGISTRY_REPLICAS="7": it takes a whole number from 1 to 5'],
    [{ REGISTRY_CREATE_BUCKET: 'maybe' }, 'REGISTRY_CREATE_BUCKET="maybe": it takes true or false'],
    [{ METRICS_NODE_LAST_WRITE: 'never' }, 'METRICS_NODE_LAST_WRITE="never": it takes true or false'],
    [{ CORS_ORIGINS: 'console.example' }, 'CORS_ORIGINS="console.example": it takes comma-separated origins like https://console.example:8443 (scheme, host and port, no path)'],
    [{ REGISTRY_DOMAINS_FILE: '/etc/mp/twice.json' }, 'REGISTRY_DOMAINS_FILE: kind "a" is answered by two domains, domain #1 (module m, kinds a) and domain #2 (module n, kinds a); keep it in one'],
    [{ HTTP_AUTH: 'basic' }, 'HTTP_AUTH="basic": it takes none (serve without tokens behind a proxy that authenticates), or leave it unset'],
    [{ HTTP_AUTH: 'none', HTTP_TOKENS_FILE: '/etc/mp/tokens.json' }, 'HTTP_AUTH="none": HTTP_TOKENS_FILE is set too: none says nobody is asked for a token; set one of them'],
    [{ HTTP_TOKENS_FILE: '/nope.json' }, 'HTTP_TOKENS_FILE="/nope.json": cannot read that file (ENOENT); it takes the path of a readable file'],
    [{ HTTP_TOKENS_FILE: '/etc/mp/bad-tokens.json' }, 'HTTP_TOKENS_FILE: /etc/mp/bad-tokens.json: token "ace": sha256 takes the SHA-256 of the token as 64 lower-case hex digits (npm run token makes a token and its line)'],
    [{ HTTP_TLS_CERT: '/etc/tls/cert.pem' }, 'HTTP_TLS_KEY: a certificate and its key go together; set both HTTP_TLS_CERT and HTTP_TLS_KEY, or neither'],
    [{ HTTP_TLS_KEY: '/etc/tls/key.pem' }, 'HTTP_TLS_CERT: a certificate and its key go together; set both HTTP_TLS_CERT and HTTP_TLS_KEY, or neither'],
    [{ HTTP_TLS_CERT: '/nope.pem', HTTP_TLS_KEY: '/etc/tls/key.pem' }, 'HTTP_TLS_CERT="/nope.pem": cannot read that file (ENOENT)'],
    [{ HTTP_TLS_CERT: '/etc/tls/cert.pem', HTTP_TLS_KEY: '/etc/tls/key.pem' }, 'HTTP_TLS_CERT="/etc/tls/cert.pem": that file holds no PEM certificate; it takes a PEM certificate chain']
  ])('%j', (env, line) => {
    expect(() => load(env)).toThrow(expect.objectContaining({ name: 'StartError' }))
    expect(() => load(env)).toThrow(line)
    try { load(env) } catch (err) { expect((err as Error).message).not.toContain('\n'); expect((err as Error).message).not.toContain('hunter2') }
  })
})

describe('without tokens the gateway is open on loopback only (docs/access.md)', () => {
  test.each(['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST'])('%s is loopback', (host) => {
    expect(load({ HTTP_HOST: host }).http).toEqual({ host, port: 8080, corsOrigins: [], maxStreams: 1000, maxWaits: 1000 })
  })
  test.each(['0.0.0.0', '::', '10.0.0.5', 'gateway.example', '128.0.0.1', '::ffff:10.0.0.1'])('%s is refused', (host) => {
    expect(() => load({ HTTP_HOST: host })).toThrow(`HTTP_HOST=${JSON.stringify(host)}: the gateway would answer anyone beyond this machine; set HTTP_TOKENS_FILE (npm run token makes one), or HTTP_AUTH=none when a proxy in front authenticates`)
  })
})
