// `npm run build [-- --outDir DIR]`: src/ as JavaScript in dist/ (scripts/transpile.mjs), which the
// image holds alone.

import { parseArgs } from 'node:util'
import { transpile } from './transpile.mjs'

const { values } = parseArgs({ options: { outDir: { type: 'string', default: 'dist' } } })
await transpile({ dirs: ['src'], outdir: values.outDir, outbase: 'src' })
