import { pino } from 'pino'
import { expect, test } from 'vitest'
import { lazyChildLogger } from './lazy-logger.js'

function logger (): { log: pino.Logger, lines: Array<Record<string, unknown>>, children: () => number } {
  const lines: Array<Record<string, unknown>> = []
  const log = pino({ level: 'info' }, { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>) } })
  let made = 0
  const child = log.child.bind(log)
  log.child = ((...args: Parameters<typeof child>) => { made++; return child(...args) }) as typeof log.child
  return { log, lines, children: () => made }
}

test('makes the child only when the request logs, and its lines carry the bindings', () => {
  const { log, lines, children } = logger()
  const quiet = lazyChildLogger(log, { reqId: 'req-1' }, undefined)
  expect(quiet.level).toBe('info')
  const loud = lazyChildLogger(log, { reqId: 'req-2' }, undefined)
  loud.error({ err: new Error('boom') }, 'the gateway failed to answer')
  loud.warn('and again')
  expect(children()).toBe(1)
  expect(lines.map((l) => [l['reqId'], l['msg']])).toEqual([['req-2', 'the gateway failed to answer'], ['req-2', 'and again']])
})
