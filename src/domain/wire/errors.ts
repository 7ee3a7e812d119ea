// Errors are values: a stable code, a message that names what was wrong and the remedy, and the
// field at fault when there is one. Transports map the code once each (src/http, src/bus). These
// are the domain's own: a face's refusals of its own (the gateway's of a token, of a method...)
// carry codes the face declares (src/http/errors.ts), never the domain.

import { defined } from '../defined.js'

export const ERROR_CODES = ['BAD_REQUEST', 'NOT_FOUND', 'CURSOR_EXPIRED', 'NOT_READY', 'BUCKET_MISSING', 'INTERNAL'] as const
export type ErrorCode = (typeof ERROR_CODES)[number]

export class ProvisionerError extends Error {
  readonly code: ErrorCode
  readonly field: string | undefined

  constructor (code: ErrorCode, message: string, field?: string) {
    super(message)
    this.name = 'ProvisionerError'
    this.code = code
    this.field = field
  }

  /** The JSON error body every face answers with. */
  toBody (): { error: { code: ErrorCode, message: string, field?: string } } {
    return { error: { code: this.code, message: this.message, ...defined({ field: this.field }) } }
  }
}

export function badRequest (field: string | undefined, message: string): ProvisionerError {
  return new ProvisionerError('BAD_REQUEST', message, field)
}

/** Any thrown thing as a ProvisionerError; what is not one already is an internal fault. */
export function asProvisionerError (err: unknown): ProvisionerError {
  if (err instanceof ProvisionerError) return err
  const text = err instanceof Error ? err.message : String(err)
  return new ProvisionerError('INTERNAL', `the service failed to answer: ${text}; the fault is logged, ask again or report it`)
}
