// A small believable mesh for the demo and the tests: four nodes, a dozen modules, needs of several
// kinds, applied entries, collections such as shell:zsh:normal, and a few keys out of shape.

import type { KV, NatsConnection } from 'nats'
import { BUCKETS, keyOf, type What } from '../src/domain/wire/key-shapes.js'

/** Creates the three buckets the provisioner clients would create (the registry is the service's). */
export async function createClientBuckets (nc: NatsConnection, replicas = 1): Promise<Record<Exclude<What, 'registry'>, KV>> {
  const js = nc.jetstream()
  return {
    needs: await js.views.kv(BUCKETS.needs, { history: 1, replicas }),
    applied: await js.views.kv(BUCKETS.applied, { history: 1, replicas }),
    collect: await js.views.kv(BUCKETS.collect, { history: 1, replicas })
  }
}

export const NODES = ['ace', 'g14', 'novox', 'shanks']
export const MODULES = ['gitea', 'keycloak', 'route-proxy', 'claude-code', 'mesh-build-node', 'postgres', 'node-tools', 'wireguard', 'mail', 'grafana', 'prometheus', 'step-ca']

const json = (v: unknown): string => JSON.stringify(v)

export interface Seeded {
  needs: number
  applied: number
  collect: number
  outOfShape: number
}

/** Writes the sample mesh into the three client buckets. */
export async function seedSampleMesh (nc: NatsConnection): Promise<Seeded> {
  const kv = await createClientBuckets(nc)
  const counts: Seeded = { needs: 0, applied: 0, collect: 0, outOfShape: 0 }
  for (const [n, node] of NODES.entries()) {
    for (const [m, module] of MODULES.entries()) {
      if ((n + m) % 3 === 2) continue
      await kv.needs.put(keyOf('needs', { node, module, kind: 'secret', name: 'db-password' }), json({ file: `/run/secrets/${module}/db-password`, owner: 65534 }))
      await kv.needs.put(keyOf('needs', { node, module, kind: 'config', name: 'settings' }), json({ keys: ['site', 'mail'] }))
      await kv.needs.put(keyOf('needs', { node, module, kind: 'port', name: '8080' }), json({ wanted: 8080, proto: 'tcp' }))
      if (m % 2 === 0) await kv.needs.put(keyOf('needs', { node, module, kind: 'bound', name: 'forge-account' }), json({ provider: 'gitea' }))
      counts.needs += m % 2 === 0 ? 4 : 3
      await kv.applied.put(keyOf('applied', { node, module }), json({ plan: `${module}@${n + 1}.${m}`, appliedAt: '2026-11-29T09:00:00Z', ok: (n + m) % 5 !== 0 }))
      counts.applied++
      await kv.collect.put(keyOf('collect', { node, collection: 'shell:zsh:normal', contributor: module }), json({ lines: [`alias ${module}-logs='journalctl -u ${module}'`] }))
      await kv.collect.put(keyOf('collect', { node, collection: 'environment', contributor: module }), json({ [`${module.toUpperCase().replaceAll('-', '_')}_URL`]: `https://${module}.${node}.internal` }))
      counts.collect += 2
    }
    await kv.collect.put(keyOf('collect', { node, collection: 'contribution:route=proxy', contributor: 'gitea' }), json({ host: `gitea.${node}.internal`, port: 3000 }))
    counts.collect++
  }
  await kv.needs.put('ace.gitea', json({ stray: 'two tokens' }))
  await kv.needs.put('novox.keycloak.secret.admin.extra', json({ stray: 'five tokens' }))
  await kv.applied.put('g14.wireguard.extra', 'not json at all')
  await kv.collect.put('shanks.shell=3azsh.gitea', json({ stray: 'lower-case escape' }))
  await kv.needs.put('shanks.mail.secret.dkim', 'plain text, not JSON')
  await kv.needs.put('shanks.mail.secret.blob', new Uint8Array([0xff, 0xfe, 0x00, 0x01]))
  counts.outOfShape += 4
  counts.needs += 2
  return counts
}
