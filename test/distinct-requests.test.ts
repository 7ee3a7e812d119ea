// Requests no key answers, each asked twice (a script walking names, a scanner, a console polling
// each once more), leave nothing behind: the caches of requests (each face's) and of answers keep
// a request asked before (recently-used.ts), are bounded by the bytes they hold and are full after
// a thousand, and a value no key has is narrowed to nothing without keeping a range for it. What a
// full collection leaves of 8,000 such requests, split over both faces and over a prefix field
// (node) and another (module), stays under a few megabytes, where a cache or an index that kept
// each one held ~0.7 KB a request (300k distinct filters once held +206 MB). The RSS right after
// such a burst is higher (tens of MB, more with more requests): garbage the collector has not yet
// reclaimed, which it gives back at its next full collection.

import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { Agent, request } from 'undici'
import { expect, test } from 'vitest'
import { startSeeded, suiteFixture } from './support/service.js'
import { askVerb } from './support/verb.js'

const fx = suiteFixture()

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as (options?: object) => void

/** The heap a full collection leaves, in bytes. */
async function heapAfterCollection (): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' })
    await new Promise((resolve) => setImmediate(resolve))
  }
  return process.memoryUsage().heapUsed
}

const REQUESTS = 8000
/** The most a full collection may leave of them: ~3 MB measured (the caches filling up), 12 MB with caches that keep every request. */
const BOUND = 6 * 2 ** 20

test(`${REQUESTS} distinct requests no key answers, asked twice each on both faces, leave under ${BOUND / 2 ** 20} MB behind`, async () => {
  const { nc, running } = await startSeeded(fx)
  const agent = new Agent({ connections: 8 })
  fx.defer(async () => { await agent.close() })
  const field = (i: number): string => i % 2 === 0 ? 'module' : 'node'
  const overHttp = async (i: number): Promise<number> => {
    const res = await request(`${running.url}/v1/needs?${field(i)}=absent${i}`, { dispatcher: agent })
    await res.body.arrayBuffer()
    return res.statusCode
  }
  const onTheBus = async (i: number): Promise<number> => (await askVerb(nc, { what: 'needs', [field(i)]: `absent${i}` })).code
  // Twice, one after the other: a request asked once is not kept, and the caches are what is measured.
  const ask = async (i: number): Promise<number> => {
    const face = i % 4 < 2 ? overHttp : onTheBus
    await face(i)
    return await face(i)
  }
  // The faces, the caches and the connections warmed first: what is measured is what requests keep.
  for (let i = -1200; i < 0; i += 50) await Promise.all(Array.from({ length: 50 }, async (_, j) => await ask(i + j)))
  const before = await heapAfterCollection()
  const codes = new Set<number>()
  for (let i = 0; i < REQUESTS; i += 50) {
    for (const code of await Promise.all(Array.from({ length: 50 }, async (_, j) => await ask(i + j)))) codes.add(code)
  }
  expect([...codes]).toEqual([200])
  const kept = await heapAfterCollection() - before
  expect(kept, `${(kept / 2 ** 20).toFixed(1)} MB kept`).toBeLessThan(BOUND)
}, 120_000)
