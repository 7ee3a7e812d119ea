import { expect, test } from 'vitest'
import { purgeDefect } from './server-defects.js'

test.each([
  ['2.9.10', true],
  ['2.9.11', true],
  ['v2.9.10', true],
  ['2.8.4', true],
  ['1.4.0', true],
  ['2.9.12', false],
  ['2.9.25', false],
  ['2.10.0', false],
  ['2.10.27', false],
  ['2.11.0-RC.1', false],
  ['3.0.0', false],
  ['not a version', false],
  [undefined, false]
])('nats-server %s loses changes on a purge: %s', (version, loses) => {
  expect(purgeDefect(version) !== undefined).toBe(loses)
})

test('the defect names the server, the upstream fix and the version that has it', () => {
  expect(purgeDefect('2.9.10')).toMatchObject({ server: '2.9.10', issue: 'https://github.com/nats-io/nats-server/pull/3838', fixedIn: '2.9.12' })
})
