// The one transpile of the checkout's TypeScript to JavaScript: `npm run build` (scripts/build.mjs)
// makes dist/ with it, the bench and the suite the JavaScript their child processes run
// (testkit/compile-js.ts). Plain JavaScript, as the image's build stage has no TypeScript loader.
//
// By esbuild, file by file, as the modules they are (no bundle; the code is written for it:
// isolatedModules, verbatimModuleSyntax): tsc's emit took ~14 s of CPU where this takes well under
// one. The types are `npm run typecheck`'s to judge, which CI runs (.ci/run). The one exception is
// src/vendor/: each of its modules is bundled with the library it re-exports (src/vendor/typebox.ts
// says why).

import { cpSync, globSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = fileURLToPath(new URL('..', import.meta.url))

/**
 * Transpiles the TypeScript under `dirs` (of the checkout; tests and declarations left out) into
 * `outdir`, laid out as under `outbase`, with source maps; then copies the page's files beside the
 * compiled gateway: src/http/page is served as it is, never compiled (docs/page.md).
 */
export async function transpile ({ dirs, outdir, outbase }) {
  const modules = dirs.flatMap((dir) => globSync(`${dir}/**/*.ts`, { cwd: root }))
    .filter((path) => !path.endsWith('.test.ts') && !path.endsWith('.d.ts'))
    .map((path) => join(root, path))
  const vendor = join(root, 'src', 'vendor') + sep
  const base = join(root, outbase)
  const options = { outdir, outbase: base, format: 'esm', platform: 'node', target: 'node24', sourcemap: true, sourcesContent: false, logLevel: 'warning' }
  await build({ ...options, entryPoints: modules.filter((path) => !path.startsWith(vendor)) })
  await build({ ...options, entryPoints: modules.filter((path) => path.startsWith(vendor)), bundle: true })
  // The page's modules and assets; its TypeScript (a declaration, a unit test) stays behind.
  cpSync(join(root, 'src', 'http', 'page'), join(outdir, relative(base, join(root, 'src')), 'http', 'page'), { recursive: true, filter: (path) => !path.endsWith('.ts') })
}
