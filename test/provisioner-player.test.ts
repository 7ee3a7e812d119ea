// The demo's provisioner clients (testkit/provisioner-player.ts): over minutes of turns they write
// needs of kinds the registry answers, apply each module a while later (some only after minutes),
// ask for kinds no domain answers and take them back, delete needs they wrote, and keep to a bounded
// set of keys; played on real buckets, the service shows each module in the state its moves imply.

import { describe, expect, test } from 'vitest'
import { compileRegistry } from '../src/domain/registry/registry.js'
import { DEFAULT_DOMAINS } from '../src/domain/registry/registry-table.js'
import { ANSWERED_NEEDS, playMoves, ProvisionerPlayer, UNANSWERED_KINDS, type Move } from '../testkit/provisioner-player.js'
import { createClientBuckets } from '../testkit/sample-mesh.js'
import { request } from './support/http.js'
import { fixture, untilReady } from './support/service.js'

const SECOND = 1000
const MINUTE = 60 * SECOND
const TURN = 3 * SECOND

/** mulberry32: a seeded stand-in for Math.random, so that a run is the same every time. */
function seeded (seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6D2B79F5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

type Timed = Move & { at: number }

function play (player: ProvisionerPlayer, until: number): Timed[] {
  const moves: Timed[] = []
  for (let at = 0; at <= until; at += TURN) for (const move of player.turn(at)) moves.push({ ...move, at })
  return moves
}

const moduleOf = (key: string): string => key.split('.').slice(0, 2).join('.')
const kindOf = (key: string): string => key.split('.')[2] as string

describe('the provisioner player, as planned', () => {
  const nodes = ['ace', 'g14']
  const modules = ['gitea', 'mail', 'wireguard']
  const moves = play(new ProvisionerPlayer({ nodes, modules, random: seeded(1) }), 30 * MINUTE)
  const puts = moves.filter((m) => m.bucket === 'needs' && m.value !== undefined)

  test('writes needs of answered kinds, and now and then of a kind no domain answers', () => {
    const answered = new Set(compileRegistry(DEFAULT_DOMAINS).keys())
    expect(ANSWERED_NEEDS.every((n) => answered.has(n.kind))).toBe(true)
    expect(UNANSWERED_KINDS.some((k) => answered.has(k))).toBe(false)
    const kinds = puts.map((m) => kindOf(m.key))
    expect(new Set(kinds)).toEqual(new Set([...ANSWERED_NEEDS.map((n) => n.kind), ...UNANSWERED_KINDS]))
    // Now and then: with two standing at most for 2 to 4 minutes, one every two minutes or so.
    const unanswered = kinds.filter((k) => UNANSWERED_KINDS.includes(k)).length
    expect(unanswered).toBeGreaterThanOrEqual(10)
    expect(unanswered / kinds.length).toBeLessThan(0.2)
  })

  test('applies a module 10 s to 5 min after the first need it has not applied, some only after minutes', () => {
    const waitingSince = new Map<string, number>()
    const lags: number[] = []
    for (const m of moves) {
      if (m.bucket === 'needs' && m.value !== undefined && !UNANSWERED_KINDS.includes(kindOf(m.key)) && !waitingSince.has(moduleOf(m.key))) waitingSince.set(moduleOf(m.key), m.at)
      if (m.bucket === 'applied') {
        expect(waitingSince.has(m.key), m.key).toBe(true)
        lags.push(m.at - (waitingSince.get(m.key) as number))
        waitingSince.delete(m.key)
      }
    }
    expect(lags.length).toBeGreaterThan(20)
    for (const lag of lags) expect(lag).toBeGreaterThanOrEqual(10 * SECOND)
    for (const lag of lags) expect(lag).toBeLessThanOrEqual(5 * MINUTE + TURN)
    expect(lags.filter((lag) => lag >= 2 * MINUTE).length).toBeGreaterThan(0)
    expect(lags.filter((lag) => lag < MINUTE).length).toBeGreaterThan(lags.length / 2)
  })

  test('takes an unanswered need back 2 to 4 minutes after asking, with two standing at most', () => {
    const asked = new Map<string, number>()
    let most = 0
    for (const m of moves.filter((m) => UNANSWERED_KINDS.includes(kindOf(m.key)))) {
      if (m.value !== undefined) {
        expect(asked.has(m.key), `${m.key} asked again while it stands`).toBe(false)
        asked.set(m.key, m.at)
        most = Math.max(most, asked.size)
      } else {
        const lag = m.at - (asked.get(m.key) as number)
        expect(lag).toBeGreaterThanOrEqual(2 * MINUTE)
        expect(lag).toBeLessThanOrEqual(4 * MINUTE + TURN)
        asked.delete(m.key)
      }
    }
    expect(most).toBe(2)
  })

  test('deletes only needs it wrote and that still stand, and keeps to a bounded set of keys', () => {
    const standing = new Set<string>()
    let deletes = 0
    for (const m of moves.filter((m) => m.bucket === 'needs')) {
      if (m.value !== undefined) standing.add(m.key)
      else {
        expect(standing.has(m.key), m.key).toBe(true)
        standing.delete(m.key)
        deletes++
      }
    }
    expect(deletes).toBeGreaterThan(puts.length / 10)
    const keys = new Set(moves.map((m) => m.key))
    expect(keys.size).toBeLessThanOrEqual(nodes.length * modules.length * (ANSWERED_NEEDS.length + UNANSWERED_KINDS.length + 1))
  })
})

describe('the provisioner player, played on the buckets', () => {
  test('the service shows each module in the state its moves imply', async () => {
    const fx = fixture()
    const server = await fx.server()
    const nc = await fx.admin(server)
    const kv = await createClientBuckets(nc)
    const running = await fx.service(server)
    await untilReady(running)
    // Three simulated minutes: modules applied, some waiting for their client, one not yet applied at all.
    const moves = play(new ProvisionerPlayer({ nodes: ['ace', 'g14'], modules: ['gitea', 'mail', 'wireguard'], random: seeded(7) }), 3 * MINUTE)
    await playMoves(kv, moves)

    // The states the order of the writes implies (a need put after its module's applied entry keeps it pending).
    const needs = new Map<string, number>()
    const applied = new Map<string, number>()
    for (const [i, m] of moves.entries()) {
      const map = m.bucket === 'needs' ? needs : applied
      if (m.value === undefined) map.delete(m.key)
      else map.set(m.key, i)
    }
    const expected: Record<string, string> = {}
    for (const module of new Set([...[...needs.keys()].map(moduleOf), ...applied.keys()])) {
      const written = [...needs].filter(([key]) => moduleOf(key) === module).map(([, i]) => i)
      const at = applied.get(module)
      expected[module] = at === undefined ? 'unapplied' : written.length === 0 ? 'orphaned' : written.some((i) => i > at) ? 'pending' : 'applied'
    }
    expect(new Set(Object.values(expected)).size, JSON.stringify(expected)).toBeGreaterThanOrEqual(3)

    await expect.poll(async () => {
      const body = await (await request(`${running.url}/v1/modules`)).body.json() as { modules: Array<{ node: string, module: string, state: string }> }
      return Object.fromEntries(body.modules.map((r) => [`${r.node}.${r.module}`, r.state]))
    }, { timeout: 10_000 }).toEqual(expected)
    const stored = await (await request(`${running.url}/v1/needs?limit=1000`)).body.json() as { entries: Array<{ key: string }> }
    expect(stored.entries.map((e) => e.key).sort()).toEqual([...needs.keys()].sort())
  })
})
