// The one error of a start that cannot go on for a reason an operator can act on: a stable code
// (as undici's `UND_ERR_*`) and one line saying what to change. main alone maps a code to an exit
// status; the answers' errors are ProvisionerError (domain/wire/errors.ts), which cross a face. It is the
// process's, not the domain's: a domain table that will not do is the domain's DomainTableError,
// which the start reads as a refusal of REGISTRY_DOMAINS_FILE.

export const START_ERROR_CODES = [
  /** A setting is malformed (main: exit 2). */
  'SETTING_INVALID',
  /** HTTP_TOKENS_FILE will not do: at start, exit 2; on SIGHUP, the tokens read before stay. */
  'TOKENS_FILE_INVALID',
  /** HTTP_TLS_CERT and HTTP_TLS_KEY will not do: at start, exit 2; on SIGHUP, the certificate in use stays. */
  'TLS_FILES_INVALID',
  /** REGISTRY_DOMAINS_FILE will not do (exit 2). */
  'DOMAIN_TABLE_INVALID',
  /** NATS refused the credentials (exit 1). */
  'NATS_SIGN_IN_REFUSED',
  /** TLS to NATS failed (exit 1). */
  'NATS_TLS_FAILED',
  /** The gateway cannot listen where it is told to (exit 1). */
  'HTTP_LISTEN_FAILED'
] as const
export type StartErrorCode = (typeof START_ERROR_CODES)[number]

export class StartError extends Error {
  readonly code: StartErrorCode

  constructor (code: StartErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'StartError'
    this.code = code
  }
}
