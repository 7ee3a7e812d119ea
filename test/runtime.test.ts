// The suite runs on the Node the service is built for, and so does every process it starts: the
// service under test (process.execPath) and `node` found on the PATH (the container test's).

import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { expect, test } from 'vitest'

const major = (version: string): number => Number(version.replace(/^v/, '').split('.')[0])

test('the tests and the processes they start run on one Node, 24 in CI, never below engines', () => {
  const engines = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { engines: { node: string } }).engines.node
  expect(engines).toBe('>=22')
  expect(major(process.version)).toBeGreaterThanOrEqual(22)
  if (process.env['CI'] !== undefined) expect(major(process.version)).toBe(24)
  expect(execFileSync(process.execPath, ['--version']).toString().trim()).toBe(process.version)
  expect(execFileSync('node', ['--version']).toString().trim()).toBe(process.version)
})
