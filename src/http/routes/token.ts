// Who the bearer token presented reads as (docs/access.md): `GET /v1/token/self`, as the console
// shows it.

import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Type } from '../../vendor/typebox.js'
import { readParameters } from '../../domain/wire/request.js'
import { badRequest } from '../../domain/wire/errors.js'
import { refused } from '../responses.js'
import type { TokenSelf } from '../schemas.js'

const SELF = '/v1/token/self'
const SELF_EXAMPLE: TokenSelf = { name: 'ace', nodes: ['ace', 'g14'], metrics: false }

/** `GET /v1/token/self`: the token presented, as the console shows who it reads as. Never its digest. */
export const token = fp<{ withoutTokens: boolean }>(async (app, { withoutTokens }) => { registerTokenSelf(app, withoutTokens) }, { name: 'token', fastify: '5.x', dependencies: ['access'], encapsulate: true })

function registerTokenSelf (app: FastifyInstance, withoutTokens: boolean): void {
  const EVERYTHING: TokenSelf = { name: null, nodes: '*', metrics: true }
  app.get(SELF, {
    // Read by every token, whatever nodes it reads: it reads itself.
    config: { access: 'self' },
    // Judged by the handler, naming the parameter, as every route's (SCHEMA_COMPILERS in schemas.ts): the schema describes it.
    schema: {
      tags: ['access'],
      operationId: 'getTokenSelf',
      summary: 'The token presented: its name, the nodes it reads, whether it reads /metrics.',
      description: 'What the bearer token of this request may read, as the tokens file says (`nodes` in its order), never its digest. ' +
        'A token of some nodes reads the registry and those nodes; asking without `node`, it gets them. ' +
        `On a gateway without tokens: \`${JSON.stringify(EVERYTHING)}\`.`,
      querystring: Type.Object({}, { additionalProperties: false }),
      response: {
        200: { description: 'The token.', content: { 'application/json': { schema: Type.Ref('TokenSelf'), example: SELF_EXAMPLE } } },
        400: refused('A parameter: this route takes none.', badRequest(undefined, `"node" is not a parameter of GET ${SELF}; it takes none`).toBody())
      }
    }
  }, async (request, reply) => {
    readParameters('registry', request.query as object, `GET ${SELF}`, [])
    const token = request.token
    const self: TokenSelf = withoutTokens || token === undefined ? EVERYTHING : { name: token.name, nodes: token.nodes === '*' ? '*' : [...token.nodes], metrics: token.metrics }
    return await reply.header('cache-control', 'no-store').send(self)
  })
}
