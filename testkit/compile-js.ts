// The checkout's TypeScript as plain JavaScript, for the child processes the bench and the suite
// start: a TypeScript loader in the child cost ~0.7 s more CPU a start (and, in the bench, its own
// thread and ~35 MB of the RSS measured).

import { copyFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { transpile } from '../scripts/transpile.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))

/**
 * Transpiles src/ and `dirs` (scripts, bench, testkit) into `out`, laid out as the checkout, by the
 * build's own transpile (scripts/transpile.mjs). `out` lies within the checkout: the compiled modules
 * import from its node_modules.
 */
export async function compileJs (out: string, dirs: readonly string[]): Promise<void> {
  await transpile({ dirs: ['src', ...dirs], outdir: out, outbase: '.' })
  // src/version.ts reads the package.json above src/, as it does in dist/.
  await copyFile(join(root, 'package.json'), join(out, 'package.json'))
}
