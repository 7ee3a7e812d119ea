import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { loadTls } from './tls-files.js'

const dir = mkdtempSync(join(tmpdir(), 'mesh-provisioner-tls-'))
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
  '-subj', '/CN=tls-test', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem')], { stdio: 'ignore' })
const files: Record<string, string> = { '/c.pem': readFileSync(join(dir, 'c.pem'), 'utf8'), '/k.pem': readFileSync(join(dir, 'k.pem'), 'utf8'), '/empty': '', '/blank': '\n' }
const load = (certFile: string, keyFile: string) => loadTls({ certFile, keyFile }, (p) => files[p] as string)

test('a certificate and its key are taken', () => {
  expect(load('/c.pem', '/k.pem')).toEqual({ cert: files['/c.pem'], key: files['/k.pem'] })
})

test.each([
  ['/empty', '/k.pem', 'HTTP_TLS_CERT="/empty": that file holds no PEM certificate (it is empty); it takes a PEM certificate chain (-----BEGIN CERTIFICATE-----)'],
  ['/blank', '/k.pem', 'HTTP_TLS_CERT="/blank": that file holds no PEM certificate (it is empty)'],
  ['/k.pem', '/k.pem', 'HTTP_TLS_CERT="/k.pem": that file holds no PEM certificate;'],
  ['/c.pem', '/empty', 'HTTP_TLS_KEY="/empty": that file holds no PEM private key (it is empty)']
])('an empty or wrong file is refused, naming it: %s %s', (cert, key, message) => {
  expect(() => load(cert, key)).toThrow(message)
})
