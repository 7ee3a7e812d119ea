// The gateway's certificate and key (SPEC §9): read, and checked to belong together, so that a
// bad pair is refused at start and, on SIGHUP, leaves the certificate in use as it is.

import { createSecureContext } from 'node:tls'
import { StartError } from '../domain/start-error.js'

export interface TlsFiles { certFile: string, keyFile: string }
export interface TlsPair { cert: string, key: string }

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
  try {
    createSecureContext(pair)
  } catch (err) {
    // OpenSSL's words (e.g. "key values mismatch"); never the files' contents.
    throw new StartError('TLS_FILES_INVALID', `HTTP_TLS_CERT=${JSON.stringify(certFile)} and HTTP_TLS_KEY=${JSON.stringify(keyFile)} do not make a certificate and its key (${(err as Error).message}); they take a PEM certificate chain and the PEM key it was issued for`)
  }
  return pair
}
