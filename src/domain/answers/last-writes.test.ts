// Each node's last write, from contents fed as a watch delivers them: the latest of its entries in
// every bucket, deleted and out-of-shape keys left out.

import { describe, expect, test } from 'vitest'
import { Contents, type KvChange } from '../store/contents.js'
import { lastWrites } from './last-writes.js'

const at = (minute: number): Date => new Date(Date.UTC(2026, 10, 29, 9, minute))

function bucket (what: 'needs' | 'applied' | 'collect', changes: Array<[key: string, minute: number, operation?: KvChange['operation']]>): Contents {
  const c = new Contents(what, 'gen-1')
  let revision = 0
  for (const [key, minute, operation = 'PUT'] of changes) c.apply({ key, value: new TextEncoder().encode('{}'), revision: ++revision, created: at(minute), operation })
  return c
}

describe('lastWrites', () => {
  test.each([
    ['no entries', [], {}],
    ['the latest of a node\'s entries across buckets', [
      bucket('needs', [['ace.gitea.secret.a', 1], ['ace.gitea.secret.b', 7], ['g14.gitea.secret.a', 3]]),
      bucket('applied', [['ace.gitea', 5], ['g14.gitea', 9]])
    ], { ace: at(7).getTime(), g14: at(9).getTime() }],
    ['a deleted entry no longer counts, an updated one at its update', [
      bucket('needs', [['ace.gitea.secret.a', 1], ['ace.gitea.secret.b', 7], ['ace.gitea.secret.b', 8, 'DEL'], ['ace.gitea.secret.a', 4]])
    ], { ace: at(4).getTime() }],
    ['a node named only by deleted or out-of-shape keys has none', [
      bucket('collect', [['bob.shell', 2], ['eve.shell.gitea', 3], ['eve.shell.gitea', 4, 'PURGE']])
    ], {}]
  ] as Array<[string, Contents[], Record<string, number>]>)('%s', (_name, buckets, expected) => {
    expect(Object.fromEntries(lastWrites(buckets))).toEqual(expected)
  })
})
