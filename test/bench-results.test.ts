// bench/RESULTS.md's side-by-side table of the last full runs: what a reader of it relies on.

import { describe, expect, test } from 'vitest'
import { sideBySide, type Run } from '../bench/results.js'
import type { Row } from '../bench/table.js'
import { defined } from '../src/domain/defined.js'

const row = (what: string, service: number): Row => ({ what, unit: 'req/s', goal: { higher: 0.85 }, service, floor: 100 })
const run = (date: string, services: number[], handed?: string): Run => ({
  date,
  machine: '2 cores',
  ...defined({ handed }),
  rows: services.map((s, i) => row(`row ${i}`, s))
})

describe('the last full runs side by side', () => {
  test('a row holds when it holds in two of the three runs; a miss is in bold', () => {
    const lines = sideBySide([run('a', [90, 80]), run('b', [70, 90]), run('c', [95, 70])]).split('\n')
    expect(lines.slice(2)).toEqual([
      '| row 0 | 0.90 | **0.70** | 0.95 | ≥ 0.85 | yes |',
      '| row 1 | **0.80** | 0.90 | **0.70** | ≥ 0.85 | NO |'
    ])
  })

  test('a run handed its server by NATS_URL says so in its column', () => {
    expect(sideBySide([run('2026-12-02 11:46', [90]), run('2026-12-02 16:37', [90], '2.10.27')]).split('\n')[0])
      .toBe('| row | 2026-12-02 11:46 | 2026-12-02 16:37 (NATS_URL: 2.10.27) | goal | holds in 2 of 2 |')
  })
})
