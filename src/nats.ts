// The NATS connection: every sign-in way of docs/running.md, never giving up on reconnecting (the client's
// default closes after ~10 tries and its KV watches then end without an error), every change of
// state logged, and a refused sign-in said at once instead of retried forever.

import { readFileSync } from 'node:fs'
import { connect, credsAuthenticator, ErrorCode, NatsError, type ConnectionOptions, type NatsConnection } from 'nats'
import type { Config } from './config.js'
import type { Logger } from './domain/logger.js'
import { purgeDefect } from './domain/follow/server-defects.js'
import { StartError } from './start-error.js'
import { defined } from './domain/defined.js'

/** The prefix of every reply subject the service subscribes to. */
export const INBOX_PREFIX = '_INBOX_mesh-provisioner'

/** The server refused the credentials (authorization violation, user or account expired) or never took them in time. */
function refusedSignIn (err: unknown): boolean {
  return err instanceof NatsError && (err.isAuthError() || err.isAuthTimeout())
}

// nats.js passes Node's own TLS errors through without a code of its own: match Node's codes (the
// X509 verify codes listed in Node's tls documentation, and its ERR_TLS_/ERR_SSL_ errors).
const NODE_TLS_CODE = /^(ERR_TLS_|ERR_SSL_|UNABLE_TO_|CERT_|CRL_|ERROR_IN_C|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|INVALID_CA|PATH_LENGTH_EXCEEDED|INVALID_PURPOSE|HOSTNAME_MISMATCH)/

/**
 * TLS failed: the handshake or the certificate check (Node's error), the TLS files (nats.js's
 * `TLS`), or the client asked for TLS where the server offers none (the one option connect checks).
 */
function failedTls (err: unknown): boolean {
  if (err instanceof NatsError) return err.code === ErrorCode.Tls || err.code === ErrorCode.ServerOptionNotAvailable
  return NODE_TLS_CODE.test((err as NodeJS.ErrnoException).code ?? '')
}

/** What went wrong, with the chained reason where nats.js gives only its code (TLS). */
function reason (err: unknown): string {
  const chained = err instanceof NatsError ? err.chainedError?.message : undefined
  return chained === undefined ? (err as Error).message : `${(err as Error).message}: ${chained}`
}

export function connectionOptions (nats: Config['nats']): ConnectionOptions {
  return {
    servers: [...nats.servers],
    // How operators see the service among the server's connections.
    name: 'mesh-provisioner',
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    reconnectJitter: 250,
    pingInterval: 10_000,
    // Its own inbox prefix, so that its NATS user may subscribe to its replies only, not every
    // reply in the account (deploy/accounts.conf grants `_INBOX_mesh-provisioner.>`).
    inboxPrefix: INBOX_PREFIX,
    ...defined({
      authenticator: nats.creds === undefined ? undefined : credsAuthenticator(readFileSync(nats.creds)),
      user: nats.user,
      pass: nats.user === undefined ? undefined : nats.pass as string,
      token: nats.token,
      tls: nats.tls === undefined ? undefined : { ...nats.tls }
    })
  }
}

/**
 * Connects, waiting for a server that is not up yet (trying again every `retryMs`), but failing at
 * once when the server refuses the credentials: that needs a person, not patience.
 */
export async function connectNats (nats: Config['nats'], log: Logger, retryMs = 2000): Promise<NatsConnection> {
  const opts = connectionOptions(nats)
  for (let attempt = 1; ; attempt++) {
    try {
      const nc = await connect(opts)
      log.info({ server: nc.getServer(), serverVersion: nc.info?.version, maxPayload: nc.info?.max_payload }, 'connected to NATS')
      warnOfDefect(nc, log)
      void followStatus(nc, log)
      return nc
    } catch (err) {
      if (refusedSignIn(err)) {
        throw new StartError('NATS_SIGN_IN_REFUSED', `NATS at ${nats.servers.join(',')} refused the credentials (${reason(err)}); check NATS_USER/NATS_PASSWORD, NATS_TOKEN or NATS_CREDS`)
      }
      if (failedTls(err)) {
        throw new StartError('NATS_TLS_FAILED', `TLS to NATS at ${nats.servers.join(',')} failed (${reason(err)}); check NATS_TLS_CA, NATS_TLS_CERT and NATS_TLS_KEY`)
      }
      if (attempt === 1 || attempt % 15 === 0) log.warn({ servers: nats.servers, err: (err as Error).message, attempt }, 'NATS is not reachable yet; trying again')
      await new Promise((resolve) => setTimeout(resolve, retryMs))
    }
  }
}

/** Says so in one line when the server's version has a known data-loss defect (the views work around it). */
function warnOfDefect (nc: NatsConnection, log: Logger): void {
  const defect = purgeDefect(nc.info?.version)
  if (defect === undefined) return
  log.warn({ server: nc.getServer(), serverVersion: defect.server, defect: defect.defect, issue: defect.issue, fixedIn: defect.fixedIn },
    `nats-server ${defect.server} has a known data-loss defect, worked around; upgrade it to ${defect.fixedIn} or later (in a checkout, scripts/fetch-nats-server.sh fetches 2.10)`)
}

async function followStatus (nc: NatsConnection, log: Logger): Promise<void> {
  let version = nc.info?.version
  for await (const s of nc.status()) {
    // A reconnect may land on another server of a cluster, of another version.
    if (s.type === 'reconnect' && nc.info?.version !== version) {
      log.info({ server: nc.getServer(), serverVersion: nc.info?.version, was: version }, 'reconnected to a nats-server of another version')
      version = nc.info?.version
      warnOfDefect(nc, log)
    }
    const data = typeof s.data === 'string' ? s.data : JSON.stringify(s.data)
    if (s.type === 'disconnect' || s.type === 'error') log.warn({ nats: s.type, data }, 'NATS connection %s', s.type)
    else if (s.type === 'pingTimer' || s.type === 'reconnecting') log.debug({ nats: s.type, data }, 'NATS connection %s', s.type)
    else log.info({ nats: s.type, data }, 'NATS connection %s', s.type)
  }
}
