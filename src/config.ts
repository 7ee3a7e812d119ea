// Every setting of docs/running.md read from the environment in one pure function: defaults applied, the
// `_FILE` twins of secrets read, everything checked, the result frozen. A malformed setting is one
// line that names it and what it takes.

import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { readDuration, readWhole } from './domain/wire/numbers.js'
import { DEFAULT_DOMAINS, type DomainTable } from './domain/registry/registry-table.js'
import { DomainTableError, parseDomainTable } from './domain/registry/registry.js'
import { StartError, type StartErrorCode } from './start-error.js'
import { loadTls, type TlsFiles } from './settings/tls-files.js'
import { parseTokens, type Token } from './settings/tokens-file.js'
import { defined } from './domain/defined.js'

export interface Config {
  nats: {
    servers: string[]
    creds?: string
    user?: string
    pass?: string
    token?: string
    tls?: { caFile?: string, certFile?: string, keyFile?: string }
  }
  http: {
    host: string
    port: number
    corsOrigins: string[]
    /** Open event streams at most (HTTP_MAX_STREAMS). */
    maxStreams: number
    /** Requests held by `wait` at most (HTTP_MAX_WAITS). */
    maxWaits: number
    /** The bearer tokens file and the tokens read from it at start; absent: the gateway is open. */
    tokensFile?: string
    tokens?: readonly Token[]
    /** Serve HTTPS with this certificate chain and key. */
    tls?: TlsFiles
  }
  subject: string
  registry: { intervalMs: number, domains: DomainTable, domainsFile?: string, createBucket: boolean, replicas: number }
  /** Export each node's last write (METRICS_NODE_LAST_WRITE): one series a node of the mesh. */
  metrics: { nodeLastWrite: boolean }
  logLevel: string
}

export type Env = Readonly<Record<string, string | undefined>>
export type ReadText = (path: string) => string

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
const SUBJECT = /^[^\s.*>]+(\.[^\s.*>]+)*$/

function fail (name: string, value: string | undefined, takes: string, code: StartErrorCode = 'SETTING_INVALID'): never {
  throw new StartError(code, `${name}${value === undefined ? '' : `=${JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value)}`}: ${takes}`)
}

function readFrom (name: string, path: string, readText: ReadText): string {
  try {
    return readText(path)
  } catch (err) {
    return fail(name, path, `cannot read that file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); it takes the path of a readable file`)
  }
}

/** A secret from NAME or from the file NAME_FILE names (trailing newline dropped); never both. */
function secret (env: Env, name: string, readText: ReadText): string | undefined {
  const direct = env[name]
  const file = env[`${name}_FILE`]
  if (direct !== undefined && direct !== '' && file !== undefined && file !== '') {
    fail(`${name}_FILE`, undefined, `${name} is set too; set one of ${name} and ${name}_FILE`)
  }
  if (file !== undefined && file !== '') {
    const text = readFrom(`${name}_FILE`, file, readText).replace(/\r?\n$/, '')
    if (text === '') fail(`${name}_FILE`, file, 'that file is empty; it takes a file holding the secret')
    return text
  }
  return direct === '' ? undefined : direct
}

function text (env: Env, name: string): string | undefined {
  const v = env[name]?.trim()
  return v === '' ? undefined : v
}

function servers (value: string): string[] {
  const list = value.split(',').map((s) => s.trim()).filter((s) => s !== '')
  if (list.length === 0) fail('NATS_URL', value, 'it takes comma-separated server URLs like nats://127.0.0.1:4222')
  for (const s of list) {
    // A URL is printed in every log line about the connection: the credential travels beside it,
    // and the refusal does not echo the value that holds it.
    const userinfo = /^(?:[a-z]+:\/\/)?([^/]*)@/i.exec(s)?.[1]
    if (userinfo !== undefined) {
      fail('NATS_URL', undefined, userinfo.includes(':')
        ? 'a server URL holds a user and password (user:password@); set NATS_USER and NATS_PASSWORD_FILE beside the address instead'
        : 'a server URL holds a token (token@); set NATS_TOKEN_FILE beside the address instead')
    }
    if (!/^((nats|tls):\/\/)?[^\s/:,]+(:\d{1,5})?$/.test(s)) {
      fail('NATS_URL', value, `"${s}" is not a server URL; it takes comma-separated URLs like nats://127.0.0.1:4222`)
    }
  }
  return list
}

/** docs/access.md: 127.0.0.0/8, ::1 and localhost; anything else reaches beyond the machine. */
function isLoopback (host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase()
  if (bare === 'localhost' || bare === '::1') return true
  const v4 = bare.replace(/^::ffff:/, '')
  return isIP(v4) === 4 && v4.startsWith('127.')
}

function tokensFrom (path: string, readText: ReadText): readonly Token[] {
  try {
    return parseTokens(readFrom('HTTP_TOKENS_FILE', path, readText), path)
  } catch (err) {
    if (err instanceof StartError && err.code === 'TOKENS_FILE_INVALID') fail('HTTP_TOKENS_FILE', undefined, err.message, err.code)
    throw err
  }
}

/** Who may read the gateway (docs/access.md): tokens, or open on loopback, or open behind a proxy by HTTP_AUTH=none. */
function access (env: Env, host: string, readText: ReadText): Pick<Config['http'], 'tokensFile' | 'tokens'> {
  const auth = text(env, 'HTTP_AUTH')
  const tokensFile = text(env, 'HTTP_TOKENS_FILE')
  if (auth !== undefined && auth !== 'none') fail('HTTP_AUTH', auth, 'it takes none (serve without tokens behind a proxy that authenticates), or leave it unset')
  if (auth === 'none' && tokensFile !== undefined) fail('HTTP_AUTH', auth, 'HTTP_TOKENS_FILE is set too: none says nobody is asked for a token; set one of them')
  if (tokensFile !== undefined) return { tokensFile, tokens: tokensFrom(tokensFile, readText) }
  if (auth === undefined && !isLoopback(host)) {
    fail('HTTP_HOST', host, 'the gateway would answer anyone beyond this machine; set HTTP_TOKENS_FILE (npm run token makes one), or HTTP_AUTH=none when a proxy in front authenticates')
  }
  return {}
}

function httpsFiles (env: Env, readText: ReadText): TlsFiles | undefined {
  const certFile = text(env, 'HTTP_TLS_CERT')
  const keyFile = text(env, 'HTTP_TLS_KEY')
  if ((certFile === undefined) !== (keyFile === undefined)) {
    fail(certFile === undefined ? 'HTTP_TLS_CERT' : 'HTTP_TLS_KEY', undefined, 'a certificate and its key go together; set both HTTP_TLS_CERT and HTTP_TLS_KEY, or neither')
  }
  if (certFile === undefined || keyFile === undefined) return undefined
  loadTls({ certFile, keyFile }, readText)
  return { certFile, keyFile }
}

/** A whole number setting from `least` to `most`, or the start stops naming it. */
function whole (name: string, value: string, least: number, most: number, takes: string): number {
  const parsed = readWhole(value)
  if (parsed === undefined || parsed < least || parsed > most) fail(name, value, takes)
  return parsed
}

function interval (value: string): number {
  const parsed = readDuration(value)
  if (parsed === undefined || parsed < 1000) {
    fail('REGISTRY_INTERVAL', value, 'it takes a duration of at least 1s, like 1h, 30m or 90s (a bare number is seconds)')
  }
  return parsed
}

function flag (name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined) return fallback
  if (/^(1|true|yes|on)$/i.test(value)) return true
  if (/^(0|false|no|off)$/i.test(value)) return false
  return fail(name, value, 'it takes true or false')
}

/** How the service signs in to NATS and its TLS files, each file read once to fail at start. */
function natsAccess (env: Env, readText: ReadText): Omit<Config['nats'], 'servers'> {
  const user = text(env, 'NATS_USER')
  const pass = secret(env, 'NATS_PASSWORD', readText)
  const token = secret(env, 'NATS_TOKEN', readText)
  const creds = text(env, 'NATS_CREDS')
  if ((user === undefined) !== (pass === undefined)) {
    fail(user === undefined ? 'NATS_USER' : 'NATS_PASSWORD', undefined, 'user and password go together; set both NATS_USER and NATS_PASSWORD (or NATS_PASSWORD_FILE)')
  }
  const ways = [user && 'NATS_USER', token && 'NATS_TOKEN', creds && 'NATS_CREDS'].filter(Boolean)
  if (ways.length > 1) fail(ways[1] as string, undefined, `${ways.join(' and ')} are both set; the service signs in one way: set one of them`)
  if (creds !== undefined) readFrom('NATS_CREDS', creds, readText)

  const caFile = text(env, 'NATS_TLS_CA')
  const certFile = text(env, 'NATS_TLS_CERT')
  const keyFile = text(env, 'NATS_TLS_KEY')
  if ((certFile === undefined) !== (keyFile === undefined)) {
    fail(certFile === undefined ? 'NATS_TLS_CERT' : 'NATS_TLS_KEY', undefined, 'a client certificate and its key go together; set both NATS_TLS_CERT and NATS_TLS_KEY')
  }
  for (const [name, path] of [['NATS_TLS_CA', caFile], ['NATS_TLS_CERT', certFile], ['NATS_TLS_KEY', keyFile]] as const) {
    if (path !== undefined) readFrom(name, path, readText)
  }
  const tls = caFile === undefined && certFile === undefined
    ? undefined
    : defined({ caFile, certFile, keyFile: certFile === undefined ? undefined : keyFile as string })
  return defined({ creds, user, pass: user === undefined ? undefined : pass as string, token, tls })
}

/** The registry's domain table: REGISTRY_DOMAINS_FILE's, or the default one. */
function registryDomains (env: Env, readText: ReadText): Pick<Config['registry'], 'domains' | 'domainsFile'> {
  const domainsFile = text(env, 'REGISTRY_DOMAINS_FILE')
  if (domainsFile === undefined) return { domains: DEFAULT_DOMAINS }
  try {
    return { domains: parseDomainTable(readFrom('REGISTRY_DOMAINS_FILE', domainsFile, readText), domainsFile), domainsFile }
  } catch (err) {
    if (err instanceof DomainTableError) fail('REGISTRY_DOMAINS_FILE', undefined, err.message, 'DOMAIN_TABLE_INVALID')
    throw err
  }
}

/** Reads the whole configuration from `env`; `readText` reads the files settings name. */
export function loadConfig (env: Env, readText: ReadText = (p) => readFileSync(p, 'utf8')): Readonly<Config> {
  const nats = natsAccess(env, readText)
  const subject = text(env, 'PROVISIONING_SUBJECT') ?? 'mesh-provisioner.provisioning'
  if (!SUBJECT.test(subject)) fail('PROVISIONING_SUBJECT', subject, 'it takes a NATS subject without wildcards, like mesh-provisioner.provisioning')

  const logLevel = text(env, 'LOG_LEVEL') ?? 'info'
  if (!LOG_LEVELS.includes(logLevel)) fail('LOG_LEVEL', logLevel, `it takes one of ${LOG_LEVELS.join(', ')}`)

  const { domains, domainsFile } = registryDomains(env, readText)
  const replicas = whole('REGISTRY_REPLICAS', text(env, 'REGISTRY_REPLICAS') ?? '1', 1, 5, 'it takes a whole number from 1 to 5')

  const corsOrigins = (text(env, 'CORS_ORIGINS') ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')
  for (const o of corsOrigins) {
    if (!/^https?:\/\/[^\s/]+$/.test(o)) fail('CORS_ORIGINS', o, 'it takes comma-separated origins like https://console.example:8443 (scheme, host and port, no path)')
  }

  const host = text(env, 'HTTP_HOST') ?? '127.0.0.1'
  const tlsFiles = httpsFiles(env, readText)
  const config: Config = {
    nats: {
      servers: servers(text(env, 'NATS_URL') ?? 'nats://127.0.0.1:4222'),
      ...nats
    },
    http: {
      host,
      port: whole('HTTP_PORT', text(env, 'HTTP_PORT') ?? '8080', 0, 65535, 'it takes a port number from 0 to 65535 (0 picks a free one)'),
      corsOrigins,
      maxStreams: whole('HTTP_MAX_STREAMS', text(env, 'HTTP_MAX_STREAMS') ?? '1000', 1, 999999, 'it takes a whole number of open event streams from 1 to 999999'),
      maxWaits: whole('HTTP_MAX_WAITS', text(env, 'HTTP_MAX_WAITS') ?? '1000', 1, 999999, 'it takes a whole number of requests held by wait from 1 to 999999'),
      ...access(env, host, readText),
      ...defined({ tls: tlsFiles })
    },
    subject,
    registry: {
      intervalMs: interval(text(env, 'REGISTRY_INTERVAL') ?? '1h'),
      domains,
      ...defined({ domainsFile }),
      createBucket: flag('REGISTRY_CREATE_BUCKET', text(env, 'REGISTRY_CREATE_BUCKET'), true),
      replicas
    },
    metrics: { nodeLastWrite: flag('METRICS_NODE_LAST_WRITE', text(env, 'METRICS_NODE_LAST_WRITE'), true) },
    logLevel
  }
  return deepFreeze(config)
}

function deepFreeze<T> (value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v)
    Object.freeze(value)
  }
  return value
}
