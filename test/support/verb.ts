// Asks the verb the way a module on the bus would, and reads the reply as the micro protocol says,
// its body checked against the verb's published answer or error schema (wire.ts).

import type { NatsConnection } from 'nats'
import { checkVerbBody } from './wire.js'

export interface VerbReply {
  /** 200 for an answer, else the Nats-Service-Error-Code. */
  code: number
  error?: string
  body: any
  bytes: number
}

export async function askVerb (nc: NatsConnection, request: unknown, subject = 'mesh-provisioner.provisioning'): Promise<VerbReply> {
  const payload = typeof request === 'string' || request instanceof Uint8Array ? request : JSON.stringify(request)
  const msg = await nc.request(subject, payload, { timeout: 5000 })
  const code = msg.headers?.get('Nats-Service-Error-Code')
  const error = msg.headers?.get('Nats-Service-Error')
  const reply = { code: code ? Number(code) : 200, ...(error ? { error } : {}), body: JSON.parse(msg.string()), bytes: msg.data.length }
  checkVerbBody(request, reply.code, reply.body)
  return reply
}
