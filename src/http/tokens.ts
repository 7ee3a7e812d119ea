// What a presented bearer token may read (docs/access.md): its lookup among the tokens file's
// (src/settings/tokens-file.ts) in constant time, and the judgement of what a request reads.

import { timingSafeEqual } from 'node:crypto'
import { sha256, type Token } from '../settings/tokens-file.js'

/**
 * The token whose digest is the presented token's SHA-256, or undefined. Every stored digest is
 * compared, each in constant time, so the time taken says nothing of how close a guess came.
 */
export function findToken (tokens: readonly Token[], presented: string): Token | undefined {
  const digest = sha256(presented)
  let found: Token | undefined
  for (const token of tokens) {
    if (timingSafeEqual(Buffer.from(token.sha256, 'hex'), digest) && found === undefined) found = token
  }
  return found
}

/**
 * What a request reads: the registry, /metrics, the token itself, or the entries of the nodes it
 * names (`nodes` undefined: of every node, which a token of some nodes does not read).
 */
export type Reading = { of: 'registry' } | { of: 'metrics' } | { of: 'self' } | { of: 'nodes', nodes: readonly string[] | undefined }

/** Why `token` may not read this, or undefined when it may. Names only the token's own nodes and those asked for. */
export function forbidden (token: Token, reading: Reading): string | undefined {
  if (reading.of === 'metrics') return token.metrics ? undefined : 'this token does not read /metrics; the scraper\'s token has "metrics": true in the tokens file'
  if (reading.of === 'registry' || reading.of === 'self' || token.nodes === '*') return undefined
  const nodes = token.nodes.join(', ')
  if (reading.nodes === undefined) return `this token reads the registry and node ${nodes} only: name one of them in the path`
  const others = reading.nodes.filter((n) => !token.nodes.includes(n))
  return others.length === 0 ? undefined : `this token reads the registry and node ${nodes} only, not node ${others.join(', ')}`
}
