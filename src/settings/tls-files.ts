// The gateway's certificate and key (docs/access.md), a setting read at start and on SIGHUP: read, and
// checked to belong together, so that a bad pair is refused at start and, on SIGHUP, leaves the
// certificate in use as it is.

import { createSecureContext } from 'node:tls'
import { StartError } from '../start-error.js'

export interface TlsFiles { certFile: string, keyFile: string }
export interface TlsPair { cert: string, key: string }

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----/
const PEM_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----/

/** Reads the pair with `readText` and proves it by building a secure context from it. */
export function loadTls ({ certFile, keyFile }: TlsFiles, readText: (path: string) => string): TlsPair {
  const read = (name: string, path: string): string => {
    try {
      return readText(path)
    } catch (err) {
      throw new StartError('TLS_FILES_INVALID', `${name}=${JSON.stringify(path)}: cannot read that file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`)
    }
  }
  const pair = { cert: read('HTTP_TLS_CERT', certFile), key: read('HTTP_TLS_KEY', keyFile) }
  // OpenSSL takes an empty certificate and key as none at all: the server would then fail every
  // handshake (or, at start, serve no TLS) while the log says all is well.
  if (!PEM_CERTIFICATE.test(pair.cert)) throw new StartError('TLS_FILES_INVALID', `HTTP_TLS_CERT=${JSON.stringify(certFile)}: that file holds no PEM certificate${pair.cert.trim() === '' ? ' (it is empty)' : ''}; it takes a PEM certificate chain (-----BEGIN CERTIFICATE-----)`)
  if (!PEM_KEY.test(pair.key)) throw new StartError('TLS_FILES_INVALID', `HTTP_TLS_KEY=${JSON.stringify(keyFile)}: that file holds no PEM private key${pair.key.trim() === '' ? ' (it is empty)' : ''}; it takes the PEM key the certificate was issued for (-----BEGIN PRIVATE KEY-----)`)
  try {
    createSecureContext(pair)
  } catch (err) {
    // OpenSSL's words (e.g. "key values mismatch"); never the files' contents.
    throw new StartError('TLS_FILES_INVALID', `HTTP_TLS_CERT=${JSON.stringify(certFile)} and HTTP_TLS_KEY=${JSON.stringify(keyFile)} do not make a certificate and its key (${(err as Error).message}); they take a PEM certificate chain and the PEM key it was issued for`)
  }
  return pair
}
