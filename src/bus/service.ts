// The verb mesh-provisioner.provisioning as a NATS micro service: a thin adapter that reads the
// payload, asks the domain and replies, and that always replies, whatever fails.

import type { NatsConnection, Service, ServiceMsg } from 'nats'
import { asProvisionerError, badRequest } from '../domain/errors.js'
import type { Logger } from '../domain/logger.js'
import type { Provisioning } from '../domain/provisioning.js'
import { readQuery } from '../domain/request.js'
import { ProvisioningAnswer, ProvisioningRequest } from '../domain/schemas.js'
import type { Metrics } from '../metrics.js'
import { MICRO_CODE } from './errors.js'

const SERVICE_NAME = 'mesh-provisioner'
const ENDPOINT_NAME = 'provisioning'

export interface BusOptions {
  nc: NatsConnection
  provisioning: Provisioning
  subject: string
  version: string
  log: Logger
  metrics?: Metrics
}

export interface Bus {
  service: Service
  stop (): Promise<void>
}

const utf8 = new TextEncoder()
const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/** Reads a payload into a request object: empty means the registry, anything else must be a JSON object. */
function readPayload (data: Uint8Array): unknown {
  if (data.length === 0) return { what: 'registry' }
  let text: string
  try {
    text = strictUtf8.decode(data)
  } catch {
    throw badRequest(undefined, 'the payload is not UTF-8 text; send a JSON object such as {"what":"needs","node":"n1"}')
  }
  try {
    return JSON.parse(text)
  } catch (err) {
    throw badRequest(undefined, `the payload is not JSON (${(err as Error).message}); send a JSON object such as {"what":"needs","node":"n1"}`)
  }
}

export async function startBus ({ nc, provisioning, subject, version, log, metrics }: BusOptions): Promise<Bus> {
  const service = await nc.services.add({
    name: SERVICE_NAME,
    version,
    description: 'The mesh provisioner\'s server: which domain answers which kind of placeholder (registry), what each module needs, what is applied where, and the items of every collection. Reads only.',
    queue: SERVICE_NAME
  })

  /** `settled`: a question with `since` has had its moment to reach the cursor's revision. */
  const handle = (msg: ServiceMsg, settled = false): void => {
    const started = process.hrtime.bigint()
    let route = 'invalid'
    let outcome = 'ok'
    let deferred = false
    try {
      const query = readQuery(readPayload(msg.data))
      route = query.what
      if (query.since !== undefined && !settled) {
        // A cursor another instance gave may be ahead of this one: answer once it is reached (or refuse then).
        deferred = true
        void provisioning.settle(query).finally(() => { handle(msg, true) })
        return
      }
      const maxBytes = nc.info?.max_payload ?? 1024 * 1024
      msg.respond(utf8.encode(provisioning.ask(query, { maxBytes }).json))
    } catch (err) {
      const e = asProvisionerError(err)
      outcome = e.code
      if (e.code === 'INTERNAL') log.error({ err }, 'the verb failed to answer')
      // A header value cannot hold CR or LF (nats.js throws and the reply becomes a bodiless 500).
      msg.respondError(MICRO_CODE[e.code], e.message.replace(/[\r\n]+/g, ' '), utf8.encode(JSON.stringify(e.toBody())))
    } finally {
      if (!deferred) metrics?.observe('bus', route, outcome, Number(process.hrtime.bigint() - started) / 1e9)
    }
  }

  service.addEndpoint(ENDPOINT_NAME, {
    subject,
    handler: (err, msg) => {
      if (err) {
        log.error({ err }, 'the verb\'s subscription failed')
        return
      }
      handle(msg)
    },
    metadata: {
      request_schema: JSON.stringify(ProvisioningRequest),
      response_schema: JSON.stringify(ProvisioningAnswer)
    }
  })
  log.info({ subject, version }, 'verb serving')

  return {
    service,
    async stop () {
      await service.stop()
    }
  }
}
