// `npm run build [-- --outDir DIR]`: the TypeScript build, then the page's files beside the
// compiled gateway: src/http/page is served as it is, never compiled (docs/page.md), and the image
// holds only the build. Plain JavaScript, as the image's build stage has no TypeScript loader.

import { execFileSync } from 'node:child_process'
import { cpSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const { values } = parseArgs({ options: { outDir: { type: 'string', default: 'dist' } } })
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', values.outDir], { stdio: 'inherit' })
// The page's modules and assets; its TypeScript (a declaration, a unit test) stays behind.
cpSync('src/http/page', join(values.outDir, 'http', 'page'), { recursive: true, filter: (path) => !path.endsWith('.ts') })
