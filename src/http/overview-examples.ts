// Examples of the mesh at a glance for the OpenAPI document (docs/glance.md): the sample mesh's shape,
// and refusals made by the domain itself so that their words are those a client will read.

import type { What } from '../domain/wire/key-shapes.js'
import { noModule, noNode } from '../domain/answers/overview.js'

const revision = 187
const cursor = '187-1795945200123456789'

export const FACETS_EXAMPLES: Record<What, unknown> = {
  registry: { what: 'registry', bucket: 'mesh-provisioner_registry', by: 'kind', revision: 13, cursor: '13-1795945200123456789', stale: false, total: 2, values: [{ value: 'bound', count: 1, revision: 4 }, { value: 'secret', count: 1, revision: 3 }], outOfShape: 0 },
  needs: { what: 'needs', bucket: 'mesh-provisioner_needs', by: 'node', revision, cursor, stale: false, total: 40, values: [{ value: 'ace', count: 114, revision: 113 }, { value: 'g14', count: 73, revision: 187 }], outOfShape: 1, next: 'g14', cut: { reason: 'limit', omitted: 38 } },
  applied: { what: 'applied', bucket: 'mesh-provisioner_applied', by: 'module', revision: 40, cursor: '40-1795945200123456789', stale: false, total: 2, values: [{ value: 'gitea', count: 12, revision: 40 }, { value: 'mail', count: 3, revision: 31 }], outOfShape: 0 },
  collect: { what: 'collect', bucket: 'mesh-provisioner_collect', by: 'collection', revision: 1234, cursor: '1234-1795945200123456789', stale: false, total: 1, values: [{ value: 'shell:zsh:normal', count: 513, revision: 1201 }], outOfShape: 0 }
}

export const NODE_EXAMPLE = {
  node: 'ace',
  needs: 114,
  applied: 12,
  collect: 40,
  outOfShape: 1,
  updated: '2026-11-29T09:40:00.000Z',
  modules: { applied: 10, pending: 1, unapplied: 1, orphaned: 0 },
  waiting: 3,
  waitingSince: '2026-11-29T09:12:00.000000001Z',
  unanswered: 1
}

export const NODES_EXAMPLE = {
  what: 'nodes',
  stale: false,
  total: 40,
  nodes: [NODE_EXAMPLE, { node: 'bob', needs: 0, applied: 0, collect: 0, outOfShape: 2, updated: null, modules: { applied: 0, pending: 0, unapplied: 0, orphaned: 0 }, waiting: 0, waitingSince: null, unanswered: 0 }],
  next: 'bob',
  cut: { reason: 'limit', omitted: 38 }
}

export const MODULE_EXAMPLE = {
  node: 'ace',
  module: 'gitea',
  needs: 4,
  needsUpdated: '2026-11-29T09:41:12.345678901Z',
  applied: { revision: 12, updated: '2026-11-29T09:40:00.123456789Z' },
  state: 'pending',
  waiting: 1,
  waitingSince: '2026-11-29T09:41:12.345678901Z',
  unanswered: 0
}

export const MODULES_EXAMPLE = {
  what: 'modules',
  stale: false,
  total: 2,
  modules: [MODULE_EXAMPLE, { node: 'g14', module: 'mail', needs: 2, needsUpdated: '2026-11-29T09:12:00.000000001Z', applied: null, state: 'unapplied', waiting: 2, waitingSince: '2026-11-29T09:12:00.000000001Z', unanswered: 1 }]
}

export const NODE_NOT_FOUND_EXAMPLE = noNode('zed').toBody()
export const MODULE_NOT_FOUND_EXAMPLE = noModule('ace', 'mail').toBody()
