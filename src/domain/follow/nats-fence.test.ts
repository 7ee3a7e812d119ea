import { describe, expect, test } from 'vitest'
import { readDelivery as readBytes, type Delivery } from './nats-fence.js'

const readDelivery = (reply: string, into: Delivery): boolean => readBytes(new TextEncoder().encode(reply), into)

const fresh = (): Delivery => ({ streamSeq: -9, consumerSeq: -9, ms: -9, nanos: -9, pending: -9 })
// 2026-12-01T13:00:00.123456789Z in ns: more digits than a double holds exactly.
const NS = '1796130000123456789'
const MS = 1796130000123

describe('readDelivery', () => {
  test.each([
    ['the form before 2.9', `$JS.ACK.KV_b.c1.1.318003.42.${NS}.7`, { streamSeq: 318003, consumerSeq: 42, ms: MS, nanos: 456789, pending: 7 }],
    ['with domain and account hash', `$JS.ACK.hub.ACCHASH.KV_b.c1.1.12.3.${NS}.0`, { streamSeq: 12, consumerSeq: 3, ms: MS, nanos: 456789, pending: 0 }],
    ['with the trailing random token', `$JS.ACK._.ACCHASH.KV_b.c1.2.5.4.${NS}.1.x9y8`, { streamSeq: 5, consumerSeq: 4, ms: MS, nanos: 456789, pending: 1 }],
    ['a time under a millisecond', '$JS.ACK.KV_b.c1.1.1.1.999999.0', { streamSeq: 1, consumerSeq: 1, ms: 0, nanos: 999999, pending: 0 }],
    ['a time of one millisecond and a bit', '$JS.ACK.KV_b.c1.1.1.1.1000001.0', { streamSeq: 1, consumerSeq: 1, ms: 1, nanos: 1, pending: 0 }]
  ])('reads %s', (_name, reply, want) => {
    const into = fresh()
    expect(readDelivery(reply, into)).toBe(true)
    expect(into).toEqual(want)
  })

  test('reads the time exactly as nats.js dates it', () => {
    const into = fresh()
    readDelivery(`$JS.ACK.KV_b.c1.1.1.1.${NS}.0`, into)
    // nats.js: millis(parseInt(ts)), i.e. Math.floor(ns / 1e6) of the rounded double.
    expect(into.ms).toBe(Math.floor(parseInt(NS, 10) / 1e6))
    expect(new Date(into.ms).toISOString()).toBe('2026-12-01T13:00:00.123Z')
  })

  test('refuses no reply (a heartbeat)', () => {
    expect(readBytes(undefined, fresh())).toBe(false)
  })

  test.each([
    ['an empty reply', ''],
    ['a flow-control reply', '$JS.FC.KV_b.abc.def'],
    ['too few tokens', '$JS.ACK.KV_b.c1.1.2.3.4'],
    ['ten tokens', '$JS.ACK.x.KV_b.c1.1.2.3.4.5'],
    ['too many tokens', '$JS.ACK.a.b.KV_b.c1.1.2.3.4.5.6.7.8'],
    ['a sequence that is not a number', `$JS.ACK.KV_b.c1.1.x.3.${NS}.0`],
    ['an empty pending count', `$JS.ACK.KV_b.c1.1.2.3.${NS}.`],
    ['a time that is not a number', '$JS.ACK.KV_b.c1.1.2.3.12345678z.0']
  ])('refuses %s', (_name, reply) => {
    const into = fresh()
    expect(readDelivery(reply, into)).toBe(false)
    expect(into).toEqual(fresh())
  })
})
