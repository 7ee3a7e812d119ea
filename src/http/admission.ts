// What a request was let in with, shared by the access check that admits it and the held requests
// (waits, streams) that are judged again when the tokens change: a leaf, so that neither imports
// the other.

import type { Reading } from './tokens.js'

/** The realm a refusal's `WWW-Authenticate: Bearer` names. */
export const REALM = 'mesh-provisioner'

/** What the request was let in to read, and with which token (by its digest). */
export interface Admission {
  sha256: string
  reading: Reading
}
