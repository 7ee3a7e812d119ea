// typebox's values, as the service takes them: one module that the build bundles whole
// (scripts/transpile.mjs). Its own entry points load ~540 modules of a file each, ~0.45 s of CPU at
// every start of the service's process, where the bundle loads in ~0.04 s (bench/RESULTS.md).
// Types come from 'typebox' itself (`import type`, erased); values come from here (eslint.config.js).

export { Type } from 'typebox'
export { Compile } from 'typebox/schema'
