// The registry's compiled default table (docs/registry.md): which domain answers which kind of placeholder.
// REGISTRY_DOMAINS_FILE may replace it with a JSON file of the same shape.

import type { Static } from 'typebox'
import { Type } from '../../vendor/typebox.js'
import { BUCKETS, TOKEN_PATTERN, shapeOf } from '../wire/key-shapes.js'

export const Domain = Type.Object({
  kinds: Type.Array(Type.String({ pattern: TOKEN_PATTERN }), { minItems: 1, description: 'The kinds this domain answers.' }),
  module: Type.String({ minLength: 1, description: 'The owning module; `<provider-module>` where each provider owns its own.' }),
  bucket: Type.Optional(Type.String({ minLength: 1, description: 'The bucket holding the values.' })),
  key: Type.Optional(Type.String({ minLength: 1, description: "The bucket's key shape." })),
  collection: Type.Optional(Type.String({ minLength: 1, description: 'The collection in the collect bucket; `<kind>` stands for each kind\'s own name.' })),
  verb: Type.Optional(Type.String({ minLength: 1, description: "The seat's verb, asked on request and reply." })),
  note: Type.Optional(Type.String({ description: 'A remark for people.' }))
}, { additionalProperties: false })
export type Domain = Static<typeof Domain>

export const DomainTable = Type.Array(Domain, { description: 'The registry domain table.' })
export type DomainTable = Static<typeof DomainTable>

export const DEFAULT_DOMAINS: DomainTable = [
  { kinds: ['config'], module: 'mesh-controller', bucket: 'mesh-controller_config', key: '<node>.<module>' },
  { kinds: ['secret'], module: 'mesh-vault', verb: 'mesh-vault.secret' },
  {
    kinds: ['consumers'],
    module: 'mesh-vault',
    verb: 'mesh-vault.consumers',
    note: "a provider's consumers' credentials, asked by the provider machine's client"
  },
  { kinds: ['bound'], module: '<provider-module>', bucket: '<provider-module>_bound', key: '<node>.<module>.<provision>[.<local>]' },
  { kinds: ['collected'], module: 'mesh-provisioner', bucket: BUCKETS.collect, key: shapeOf('collect') },
  {
    kinds: ['shell', 'environment', 'contribution'],
    module: 'mesh-provisioner',
    bucket: BUCKETS.collect,
    key: shapeOf('collect'),
    collection: '<kind>'
  },
  {
    kinds: ['dir', 'access', 'port', 'seat', 'machine'],
    module: 'mesh-controller',
    bucket: 'mesh-controller_assignments',
    key: '<node>.<module>',
    note: "the controller's assignments mirror; the value carries the provisioner's plan of a module handed to it"
  }
]
