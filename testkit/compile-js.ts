// The checkout's TypeScript as plain JavaScript, for the child processes the bench and the suite
// start: a TypeScript loader in the child cost ~0.7 s more CPU a start (and, in the bench, its own
// thread and ~35 MB of the RSS measured).

import { copyFile, cp, glob } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = fileURLToPath(new URL('..', import.meta.url))

/**
 * Transpiles src/ and `dirs` (scripts, bench, testkit) file by file into `out`, laid out as the
 * checkout, as tsc would emit them (no bundle: the service runs as its modules, as in dist/). By
 * esbuild: tsc took ~14 s of CPU a run; `npm run typecheck` judges the types. `out` lies within the
 * checkout: the compiled modules import from its node_modules.
 */
export async function compileJs (out: string, dirs: readonly string[]): Promise<void> {
  const entryPoints: string[] = []
  for (const dir of ['src', ...dirs]) {
    for await (const file of glob(`${dir}/**/*.ts`, { cwd: root })) if (!file.endsWith('.test.ts') && !file.endsWith('.d.ts')) entryPoints.push(join(root, file))
  }
  await build({ entryPoints, outdir: out, outbase: root, format: 'esm', platform: 'node', target: 'node22', logLevel: 'warning' })
  // What the service reads beside its modules, as in dist/ (scripts/build.mjs): src/version.ts the
  // package.json above src/, the page's route the page's files, served as they are.
  await copyFile(join(root, 'package.json'), join(out, 'package.json'))
  await cp(join(root, 'src', 'http', 'page'), join(out, 'src', 'http', 'page'), { recursive: true, filter: (path) => !path.endsWith('.ts') })
}
