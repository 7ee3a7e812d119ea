// Before the suites of the nats-2.10 project, whose files alone start the service and the scripts
// as processes of their own (test/support/process.ts): the working tree's src/ and scripts/
// compiled to JavaScript once for the run, in a folder of the run's own (another checkout's run may
// share .cache), removed at its end.

import { rm } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import type { TestProject } from 'vitest/node'
import { compileJs } from '../testkit/compile-js.js'
import { runFolder } from './run-folder.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder of the compiled checkout the suites' child processes run from. */
    childJs: string
  }
}

const PARENT = fileURLToPath(new URL('../.cache/child-js/', import.meta.url))

export default async function setup (project: TestProject): Promise<() => Promise<void>> {
  const dir = await runFolder(PARENT)
  const compile = async (): Promise<void> => { await compileJs(dir, ['scripts']) }
  await compile()
  // In watch mode, a rerun starts what the working tree holds then.
  project.onTestsRerun(compile)
  project.provide('childJs', dir)
  return async () => { await rm(dir, { recursive: true, force: true }) }
}
