// Every start failure's stable code, and the exit status main gives it: 2 for what the settings
// say, 1 for what the service met (NATS and the listening address, held by test/settings.test.ts
// and test/main.test.ts against a real server and port).

import { expect, test } from 'vitest'
import { loadConfig, type Env } from './config.js'
import { START_ERROR_CODES } from './start-error.js'
import { EXIT_STATUS } from './exit-status.js'

const files: Record<string, string> = {
  '/tokens.json': '{"tokens":[{"name":"ace","sha256":"ABC","nodes":["ace"]}]}',
  '/twice.json': '[{"kinds":["a"],"module":"m","verb":"v"},{"kinds":["a"],"module":"n","verb":"w"}]',
  '/cert.pem': 'not a certificate',
  '/key.pem': 'not a key'
}
const readText = (path: string): string => {
  if (path in files) return files[path] as string
  throw Object.assign(new Error('no such file'), { code: 'ENOENT' })
}

test.each<[Env, string, number]>([
  [{ HTTP_PORT: 'eighty' }, 'SETTING_INVALID', 2],
  [{ HTTP_TOKENS_FILE: '/absent.json' }, 'SETTING_INVALID', 2],
  [{ HTTP_TOKENS_FILE: '/tokens.json' }, 'TOKENS_FILE_INVALID', 2],
  [{ HTTP_TLS_CERT: '/cert.pem', HTTP_TLS_KEY: '/key.pem' }, 'TLS_FILES_INVALID', 2],
  [{ HTTP_TLS_CERT: '/absent.pem', HTTP_TLS_KEY: '/key.pem' }, 'TLS_FILES_INVALID', 2],
  [{ REGISTRY_DOMAINS_FILE: '/twice.json' }, 'DOMAIN_TABLE_INVALID', 2]
])('%j stops the start as %s, exit %d', (env, code, status) => {
  expect(() => loadConfig(env, readText)).toThrow(expect.objectContaining({ name: 'StartError', code }))
  expect(EXIT_STATUS[code as keyof typeof EXIT_STATUS]).toBe(status)
})

test.each([['NATS_SIGN_IN_REFUSED', 1], ['NATS_TLS_FAILED', 1], ['HTTP_LISTEN_FAILED', 1]] as const)('%s exits %d', (code, status) => {
  expect(EXIT_STATUS[code]).toBe(status)
})

test('every code has its exit status', () => {
  expect(Object.keys(EXIT_STATUS).sort()).toEqual([...START_ERROR_CODES].sort())
})
