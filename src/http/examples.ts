// Examples for the OpenAPI document: small answers of the sample mesh's shape, and refusals made
// by the domain itself so that their words are the ones a client will really read.

import { keyOf, type What } from '../domain/wire/key-shapes.js'
import { asProvisionerError, ProvisionerError } from '../domain/wire/errors.js'
import { cursorExpired, noEntry } from '../domain/answers/provisioning.js'

const updated = '2026-11-29T09:40:00.000Z'

/** One entry of each bucket, as answers and the one-entry routes give it. */
export const ENTRY_EXAMPLES = {
  registry: { key: 'secret', kind: 'secret', value: { kind: 'secret', module: 'mesh-vault', verb: 'mesh-vault.secret' }, revision: 3, updated },
  needs: { key: 'ace.gitea.secret.db-password', node: 'ace', module: 'gitea', kind: 'secret', name: 'db-password', value: { file: '/run/secrets/gitea/db-password', owner: 65534 }, revision: 1, updated },
  applied: { key: 'g14.gitea', node: 'g14', module: 'gitea', value: { plan: 'gitea@2.0', ok: true }, revision: 12, updated },
  collect: { key: 'n1.shell=3Azsh=3Anormal.gitea', node: 'n1', collection: 'shell:zsh:normal', contributor: 'gitea', value: { lines: ["alias gitea-logs='journalctl -u gitea'"] }, revision: 1201, updated }
} satisfies Record<What, unknown>

/** The refusal of an entry the bucket does not hold, one per bucket. */
export const NOT_FOUND_EXAMPLES: Record<What, unknown> = {
  registry: noEntry('registry', keyOf('registry', { kind: 'colour' })).toBody(),
  needs: noEntry('needs', keyOf('needs', { node: 'ace', module: 'gitea', kind: 'secret', name: 'smtp-password' })).toBody(),
  applied: noEntry('applied', keyOf('applied', { node: 'ace', module: 'mail' })).toBody(),
  collect: noEntry('collect', keyOf('collect', { node: 'n1', collection: 'shell:bash:normal', contributor: 'gitea' })).toBody()
}

export const ANSWER_EXAMPLES: Record<What, unknown> = {
  registry: {
    what: 'registry',
    bucket: 'mesh-provisioner_registry',
    revision: 13,
    total: 1,
    stale: false,
    entries: [ENTRY_EXAMPLES.registry],
    outOfShape: [],
    cursor: '13-1795945200123456789'
  },
  needs: {
    what: 'needs',
    bucket: 'mesh-provisioner_needs',
    revision: 187,
    total: 2,
    stale: false,
    entries: [
      ENTRY_EXAMPLES.needs,
      { key: 'shanks.mail.secret.dkim', node: 'shanks', module: 'mail', kind: 'secret', name: 'dkim', raw: 'plain text, not JSON', problem: 'the value is not JSON: Unexpected token', revision: 186, updated }
    ],
    outOfShape: [{ key: 'ace.gitea', revision: 184, reason: 'needs keys are <node>.<module>.<kind>.<name>: this one has 2 tokens' }],
    next: 'shanks.mail.secret.dkim',
    cut: { reason: 'limit', omitted: 40 },
    cursor: '187-1795945200123456789'
  },
  applied: {
    what: 'applied',
    bucket: 'mesh-provisioner_applied',
    revision: 40,
    total: 1,
    stale: false,
    entries: [ENTRY_EXAMPLES.applied],
    outOfShape: [],
    cursor: '40-1795945200123456789'
  },
  collect: {
    what: 'collect',
    bucket: 'mesh-provisioner_collect',
    revision: 1234,
    total: 1,
    stale: false,
    entries: [ENTRY_EXAMPLES.collect],
    outOfShape: [],
    cursor: '1234-1795945200123456789'
  }
}

/** The body of the refusal `ask` meets. */
export function refusal (ask: () => unknown): unknown {
  try {
    ask()
  } catch (err) {
    return asProvisionerError(err).toBody()
  }
  throw new Error('the example request was not refused')
}

export const BUCKET_MISSING_EXAMPLE = new ProvisionerError('BUCKET_MISSING', 'bucket mesh-provisioner_needs does not exist; the provisioner clients create it, and the service serves it as soon as it appears').toBody()

export const INTERNAL_EXAMPLE = asProvisionerError(new Error('example fault')).toBody()

export const CURSOR_EXPIRED_EXAMPLE = cursorExpired('needs').toBody()
