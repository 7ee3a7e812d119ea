// The requests of the rows that must not measure a cache lookup: every node-and-module request of
// a mesh in turn, more of them than the answer cache holds (1024 answers), so that each asks the
// service to answer rather than to find an answer it kept.

import { MODULES, NEEDS_PER_MODULE, nodeName, nodesFor } from './mesh.js'

/** More distinct requests than the answer cache holds, with room to spare. */
const AT_LEAST = 4096

/** Each node and module of the mesh of about `keys` needs keys. */
function * pairsOf (keys: number): Generator<{ node: string, module: string }> {
  for (let n = 0; n < nodesFor(keys); n++) for (const module of MODULES) yield { node: nodeName(n), module }
}

/**
 * The verb's requests for every node and module of the mesh, at least AT_LEAST of them: a small
 * mesh's pairs are asked again with limits that differ (each at least the pair's needs, so that
 * every answer is the same 50 entries), which the cache keys apart.
 */
export function distinctRequests (keys: number): string[] {
  const pairs = [...pairsOf(keys)]
  const rounds = Math.ceil(AT_LEAST / pairs.length)
  const out: string[] = []
  for (let r = 0; r < rounds; r++) {
    for (const { node, module } of pairs) out.push(JSON.stringify({ what: 'needs', node, module, ...(r === 0 ? {} : { limit: NEEDS_PER_MODULE + r }) }))
  }
  return out
}

/** The gateway's path of every node-and-module request of the mesh, each once. */
export function distinctPaths (keys: number): string[] {
  return [...pairsOf(keys)].map(({ node, module }) => `/v1/needs?node=${node}&module=${module}`)
}
