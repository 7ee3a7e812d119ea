import { expect, test } from 'vitest'
import { createLog } from './log.js'

test('secrets are censored at every level, whatever object carries them', () => {
  const lines: string[] = []
  const log = createLog('trace', { service: 't' }, { write: (line: string) => { lines.push(line) } })
  log.trace({ req: { headers: { authorization: 'Bearer s3cret-1', host: 'h' }, query: { access_token: 's3cret-2', node: 'ace' } } }, 'a request')
  log.debug({ nats: { user: 'svc', pass: 's3cret-3', token: 's3cret-4' } }, 'settings')
  log.warn({ password: 's3cret-5', authorization: 'Basic s3cret-6', access_token: 's3cret-7' }, 'flat')
  log.error({ err: { headers: { authorization: 'Bearer s3cret-8' } } }, 'an error')
  expect(lines).toHaveLength(4)
  const text = lines.join('')
  expect(text).not.toMatch(/s3cret/)
  expect(text).toContain('"host":"h"')
  expect(text).toContain('"node":"ace"')
  expect(text).toContain('"user":"svc"')
  expect(text.split('[redacted]')).toHaveLength(9)
})
