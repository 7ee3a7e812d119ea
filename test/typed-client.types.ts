// Compile-time checks of the typed client (test/typed-client.test.ts type-checks this file): no
// answer of the gateway, no schema of the bus, and no event of a stream, holds `unknown` in its type; the writer's
// value is a JSON value.

import type { Answer, NeedsEvents } from '../clients/typescript/console.js'
import type { components as bus } from '../clients/typescript/asyncapi.js'
import type { JsonValue, paths } from '../clients/typescript/openapi.js'

/** True when T is JsonValue itself. */
type IsJson<T> = [T] extends [JsonValue] ? [JsonValue] extends [T] ? true : false : false

/** True when `unknown` (or `any`) is anywhere in T. */
export type HoldsUnknown<T> =
  unknown extends T ? true
    : IsJson<T> extends true ? false
      : T extends ReadonlyArray<infer E> ? HoldsUnknown<E>
        : T extends object ? (true extends { [K in keyof T]-?: HoldsUnknown<T[K]> }[keyof T] ? true : false)
          : false

type Expect<T extends false> = T

export type EveryAnswer = Expect<{ [P in keyof paths]: HoldsUnknown<Answer<P>> }[keyof paths]>
export type EveryEvent = Expect<HoldsUnknown<NeedsEvents[keyof NeedsEvents]>>
export type EveryBusSchema = Expect<HoldsUnknown<bus['schemas'][keyof bus['schemas']]>>
export type TheValue = Expect<HoldsUnknown<Answer<'/v1/needs'>['entries'][number]['value']>>
// The check itself sees `unknown` where it is: a type that holds it is caught.
export type Caught = Expect<HoldsUnknown<{ a: { b: unknown[] } }> extends true ? false : true>
