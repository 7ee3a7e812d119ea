// `npm run build [-- --outDir DIR]`: src/ as JavaScript, file by file as the modules it holds, with
// source maps, and the page's files beside the compiled gateway: src/http/page is served as it is,
// never compiled (docs/page.md), and the image holds only the build. Plain JavaScript, as the
// image's build stage has no TypeScript loader.
//
// Transpiled by esbuild (the code is written for it: isolatedModules, verbatimModuleSyntax): tsc's
// emit took ~14 s of CPU where this takes well under one. The types are `npm run typecheck`'s to
// judge, which CI runs (.ci/run).

import { cpSync, globSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { build } from 'esbuild'

const { values } = parseArgs({ options: { outDir: { type: 'string', default: 'dist' } } })
const entryPoints = globSync('src/**/*.ts').filter((path) => !path.endsWith('.test.ts') && !path.endsWith('.d.ts'))
await build({ entryPoints, outdir: values.outDir, outbase: 'src', format: 'esm', platform: 'node', target: 'node24', sourcemap: true, sourcesContent: false, logLevel: 'warning' })
// The page's modules and assets; its TypeScript (a declaration, a unit test) stays behind.
cpSync('src/http/page', join(values.outDir, 'http', 'page'), { recursive: true, filter: (path) => !path.endsWith('.ts') })
