// The micro protocol v1 answers of $SRV.PING, $SRV.INFO and $SRV.STATS as nats.js sends them for the
// verb's service: schemas for the AsyncAPI document (a test holds real answers to them).

import { Type } from '../vendor/typebox.js'

const identity = {
  name: Type.String({ description: 'The service name: `mesh-provisioner`.' }),
  id: Type.String({ description: 'This instance\'s id, unique to each start.' }),
  version: Type.String({ description: 'The package\'s semver version.' }),
  metadata: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'The service\'s metadata: absent, none is set.' }))
}

const kind = (type: string) => Type.Literal(`io.nats.micro.v1.${type}`, { description: 'The micro protocol\'s answer type.' })

const endpoint = {
  name: Type.String({ description: 'The endpoint: `provisioning`.' }),
  subject: Type.String({ description: 'The subject it answers on (PROVISIONING_SUBJECT).' }),
  queue_group: Type.String({ description: 'The queue group the instances share: `mesh-provisioner`.' })
}

export const PingAnswer = Type.Object({ type: kind('ping_response'), ...identity }, { description: 'A $SRV.PING answer: the instance is there.' })

export const InfoAnswer = Type.Object({
  type: kind('info_response'),
  ...identity,
  description: Type.String({ description: 'What the service answers.' }),
  endpoints: Type.Array(Type.Object({
    ...endpoint,
    metadata: Type.Object({
      request_schema: Type.String({ description: 'The request\'s JSON Schema, as JSON text.' }),
      response_schema: Type.String({ description: 'The answer\'s JSON Schema, as JSON text.' })
    }, { description: 'The endpoint\'s schemas (the micro protocol has no schema verb).' })
  }, { description: 'One endpoint.' }), { description: 'The service\'s endpoints: the verb.' })
}, { description: 'A $SRV.INFO answer: the service and its endpoints.' })

export const StatsAnswer = Type.Object({
  type: kind('stats_response'),
  ...identity,
  started: Type.String({ format: 'date-time', description: 'When the instance started serving.' }),
  endpoints: Type.Array(Type.Object({
    ...endpoint,
    num_requests: Type.Integer({ description: 'Requests received.' }),
    num_errors: Type.Integer({ description: 'Refusals and failures answered (every error reply).' }),
    last_error: Type.String({ description: 'What the last one was (empty before the first).' }),
    processing_time: Type.Integer({ description: 'Time spent answering, in nanoseconds.' }),
    average_processing_time: Type.Integer({ description: 'The mean time an answer took, in nanoseconds.' }),
    data: Type.Optional(Type.Unknown({ description: 'An endpoint\'s own stats, any JSON: the verb has none (absent).' }))
  }, { description: 'One endpoint\'s counts.' }), { description: 'Each endpoint\'s counts.' })
}, { description: 'A $SRV.STATS answer: what each endpoint has answered.' })
