// The verb mesh-provisioner.provisioning as a NATS micro service: a thin adapter that reads the
// payload, asks the domain and replies, and that always replies, whatever fails.

import type { NatsConnection, Service, ServiceMsg } from 'nats'
import { backoff } from '../domain/backoff.js'
import { asProvisionerError, badRequest } from '../domain/wire/errors.js'
import type { Logger } from '../domain/logger.js'
import { keptRequestBytes, type Provisioning, type KeptRequest } from '../domain/answers/provisioning.js'
import { RecentlyUsed } from '../domain/answers/recently-used.js'
import { isOverview, readRequest } from '../domain/wire/request.js'
import type { KeptOverviewRequest } from '../domain/answers/overview.js'
import { ProvisioningAnswer, ProvisioningRequest } from '../domain/wire/schemas.js'
import type { Metrics } from '../metrics.js'
import { endpointErrorCounter } from '../domain/follow/nats-fence.js'
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
  /** The micro service serving the verb now: a new one replaces it when its subscription ends under it. */
  readonly service: Service
  /** Whether the verb is being served (false from its subscription's end until it is served again). */
  serving (): boolean
  stop (): Promise<void>
}

/** The first wait before serving the verb again; it doubles while the verb keeps failing, up to the second. */
const AGAIN_MS = [1000, 30_000] as const

const utf8 = new TextEncoder()
const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/** A payload as text: empty means the registry. */
function payloadText (data: Uint8Array): string {
  if (data.length === 0) return ''
  try {
    return strictUtf8.decode(data)
  } catch {
    throw badRequest(undefined, 'the payload is not UTF-8 text; send a JSON object such as {"what":"needs","node":"n1"}')
  }
}

/** Reads a payload's text into a request object: empty means the registry, anything else must be a JSON object. */
function readPayload (text: string): unknown {
  if (text === '') return { what: 'registry' }
  try {
    return JSON.parse(text)
  } catch (err) {
    throw badRequest(undefined, `the payload is not JSON (${(err as Error).message}); send a JSON object such as {"what":"needs","node":"n1"}`)
  }
}

/** The verb's handler: reads the payload, answers it or refuses, and counts each refusal through `errors` (in $SRV.STATS). */
function answering ({ nc, provisioning, log, metrics }: BusOptions, errors: { count: (err: Error) => void }): (msg: ServiceMsg) => void {
  /**
   * The requests of recent payloads, for the answer size they were read for: the same text is the
   * same request. Bounded by what they hold; their answers are the answer cache's to count.
   */
  const keptRequests = new RecentlyUsed<KeptRequest | KeptOverviewRequest, number>({ maxBytes: 4 * 1024 * 1024, maxEntries: 1024, bytesOf: (_kept, text) => keptRequestBytes(text) })
  const ask = (text: string, maxBytes: number): KeptRequest | KeptOverviewRequest => {
    const request = readRequest(readPayload(text))
    return isOverview(request) ? provisioning.overviews.keep(request, { maxBytes }) : provisioning.keep(request, { maxBytes })
  }
  /** `caughtUp`: a request with `since` has had its moment to reach the cursor's revision. */
  const handle = (msg: ServiceMsg, caughtUp = false): void => {
    const started = process.hrtime.bigint()
    let route = 'invalid'
    let outcome = 'ok'
    let deferred = false
    try {
      const maxBytes = nc.info?.max_payload ?? 1024 * 1024
      const text = payloadText(msg.data)
      const kept = keptRequests.obtain(text, maxBytes, () => ask(text, maxBytes))
      const request = kept.request
      route = request.what
      if (!isOverview(request) && request.since !== undefined && !caughtUp) {
        // A cursor another instance gave may be ahead of this one: answer once it is reached (or refuse then).
        deferred = true
        void provisioning.catchUp(request).finally(() => { handle(msg, true) })
        return
      }
      msg.respond(kept.answer().bytes)
    } catch (err) {
      const e = asProvisionerError(err)
      outcome = e.code
      if (e.code === 'INTERNAL') log.error({ err }, 'the verb failed to answer')
      // A header value cannot hold CR or LF (nats.js throws and the reply becomes a bodiless 500).
      const text = e.message.replace(/[\r\n]+/g, ' ')
      msg.respondError(MICRO_CODE[e.code], text, utf8.encode(JSON.stringify(e.toBody())))
      errors.count(new Error(`${MICRO_CODE[e.code]} ${e.code}: ${text}`))
    } finally {
      if (!deferred) metrics?.observe('bus', route, outcome, Number(process.hrtime.bigint() - started) / 1e9)
    }
  }
  return handle
}

/** One micro service serving the verb until it stops. */
async function serve (opts: BusOptions): Promise<Service> {
  const { nc, subject, version } = opts
  const service = await nc.services.add({
    name: SERVICE_NAME,
    version,
    description: 'The mesh provisioner\'s server: which domain answers which kind of placeholder (registry), what each module needs, what is applied where, and the items of every collection. Reads only.',
    queue: SERVICE_NAME
  })
  // Counts nothing until the endpoint is added: nothing is answered before.
  const errors = { count: (_err: Error): void => {} }
  const handle = answering(opts, errors)
  service.addEndpoint(ENDPOINT_NAME, {
    subject,
    // nats.js closes the whole service on a subscription error before a handler sees it; the
    // service's `stopped` says so (startBus follows it).
    handler: (err, msg) => { if (!err) handle(msg) },
    metadata: {
      request_schema: JSON.stringify(ProvisioningRequest),
      response_schema: JSON.stringify(ProvisioningAnswer)
    }
  })
  try {
    errors.count = endpointErrorCounter(service, ENDPOINT_NAME)
    // Served means the server has the subscriptions: a request sent right after finds a responder.
    await nc.flush()
  } catch (err) {
    await service.stop()
    throw err
  }
  return service
}

/**
 * Serves the verb, and serves it again when its subscription ends under it (a permission taken
 * away, a server that drops it): nats.js then stops the whole micro service, and a process that
 * looks healthy while answering nothing is the one outcome not to allow.
 */
export async function startBus (opts: BusOptions): Promise<Bus> {
  const { nc, subject, version, log } = opts
  let service = await serve(opts)
  let serving = true
  let stopping = false
  let since = Date.now()
  /** Failures in a row: a verb served longer than the longest wait starts again from the first. */
  let failures = 0
  let timer: NodeJS.Timeout | undefined

  const follow = (current: Service): void => {
    void current.stopped.then((err) => {
      if (stopping || current !== service) return
      serving = false
      if (Date.now() - since > AGAIN_MS[1]) failures = 0
      const againMs = backoff(...AGAIN_MS, ++failures)
      log.error({ err, subject, againMs }, 'the verb is not served: its subscription ended under it; serving it again in %d ms', againMs)
      if (!nc.isClosed()) timer = setTimeout(() => { void again() }, againMs)
    })
  }
  const again = async (): Promise<void> => {
    if (stopping) return
    try {
      const next = await serve(opts)
      if (stopping) {
        await next.stop()
        return
      }
      service = next
      serving = true
      since = Date.now()
      log.warn({ subject }, 'the verb is served again')
      follow(service)
    } catch (err) {
      if (stopping) return
      const againMs = backoff(...AGAIN_MS, ++failures)
      log.error({ err, subject, againMs }, 'the verb could not be served again; trying in %d ms', againMs)
      timer = setTimeout(() => { void again() }, againMs)
    }
  }
  follow(service)
  log.info({ subject, version }, 'verb serving')

  return {
    get service () { return service },
    serving: () => serving,
    async stop () {
      stopping = true
      clearTimeout(timer)
      await service.stop()
    }
  }
}
