// A self-signed certificate for the gateway on 127.0.0.1 (and localhost), made by openssl, which the
// suite's machines have (README.md): the TLS tests serve it and trust it as its own CA.

import { execFileSync } from 'node:child_process'
import { join } from 'node:path'

/** Writes `<name>.crt` and `<name>.key` into `dir`; gives their paths. */
export function selfSigned (dir: string, name = 'gateway'): { certFile: string, keyFile: string } {
  const certFile = join(dir, `${name}.crt`)
  const keyFile = join(dir, `${name}.key`)
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', `/CN=${name}`, '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', keyFile, '-out', certFile], { stdio: 'ignore' })
  return { certFile, keyFile }
}
