// Asks the verb the way a module on the bus would, and reads the reply as the micro protocol says.

import type { NatsConnection } from 'nats'

export interface VerbReply {
  /** 200 for an answer, else the Nats-Service-Error-Code. */
  code: number
  error?: string
  body: any
  bytes: number
}

export async function askVerb (nc: NatsConnection, request: unknown, subject = 'mesh-provisioner.provisioning', timeout = 5000): Promise<VerbReply> {
  const payload = typeof request === 'string' || request instanceof Uint8Array ? request : JSON.stringify(request)
  const msg = await nc.request(subject, payload, { timeout })
  const code = msg.headers?.get('Nats-Service-Error-Code')
  const error = msg.headers?.get('Nats-Service-Error')
  return {
    code: code ? Number(code) : 200,
    ...(error ? { error } : {}),
    body: JSON.parse(msg.string()),
    bytes: msg.data.length
  }
}
