import { describe, expect, test } from 'vitest'
import { needsWhat, readWait } from './wait.js'

describe('readWait', () => {
  test.each([['500ms', 500], ['5s', 5000], ['30', 30_000], ['1.5', 1500], ['.5', 500], ['.5s', 500], ['60s', 60_000], ['1m', 60_000], ['0', 0], ['', undefined], [undefined, undefined]])('%j is %j ms', (text, expected) => {
    expect(readWait(text)).toBe(expected)
  })
  test.each([['61s'], ['2m'], ['-1'], ['soon'], ['5 parsecs'], [' 5s'], ['5 '], ['5 s'], ['0x10'], ['1e1'], [['1', '2']]])('refuses %j naming wait and what works', (text) => {
    expect(() => readWait(text)).toThrow(expect.objectContaining({ code: 'BAD_REQUEST', field: 'wait', message: expect.stringMatching(/will not do; it takes a duration of at most 60s/) }))
  })
  test('without since or If-None-Match it is refused, saying to give either', () => {
    expect(() => { needsWhat(false, undefined) }).toThrow(expect.objectContaining({ field: 'wait', message: expect.stringMatching(/give since .* or If-None-Match/) }))
    expect(() => { needsWhat(false, undefined, false) }).toThrow(expect.objectContaining({ field: 'wait', message: 'wait holds this request until its answer changes: give If-None-Match (the ETag of an earlier answer) with it (this route takes no since)' }))
    expect(() => { needsWhat(true, undefined) }).not.toThrow()
    expect(() => { needsWhat(false, '"e"') }).not.toThrow()
  })
})
