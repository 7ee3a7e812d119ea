// Asks the verb the way a module on the bus would, and reads the reply as the micro protocol says,
// its body checked against the verb's published answer or error schema (wire.ts).

import type { Msg, NatsConnection } from 'nats'
import { checkVerbBody } from './wire.js'

export interface VerbReply {
  /** 200 for an answer, else the Nats-Service-Error-Code. */
  code: number
  error?: string
  body: any
  bytes: number
}

const SUBJECT = 'mesh-provisioner.provisioning'

/**
 * Asks the verb and gives its reply as nats.js does, its body checked as askVerb checks it: for a
 * test that reads the reply's bytes and headers itself.
 */
export async function requestVerb (nc: NatsConnection, request: unknown, { subject = SUBJECT, timeout = 5000 } = {}): Promise<Msg> {
  const payload = typeof request === 'string' || request instanceof Uint8Array ? request : JSON.stringify(request)
  const msg = await nc.request(subject, payload, { timeout })
  const code = msg.headers?.get('Nats-Service-Error-Code')
  checkVerbBody(request, code ? Number(code) : 200, JSON.parse(msg.string()))
  return msg
}

export async function askVerb (nc: NatsConnection, request: unknown, subject = SUBJECT, timeout = 5000): Promise<VerbReply> {
  const msg = await requestVerb(nc, request, { subject, timeout })
  const code = msg.headers?.get('Nats-Service-Error-Code')
  const error = msg.headers?.get('Nats-Service-Error')
  return { code: code ? Number(code) : 200, ...(error ? { error } : {}), body: JSON.parse(msg.string()), bytes: msg.data.length }
}
