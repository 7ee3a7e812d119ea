// The package's semver and licence, read once from package.json (the micro service announces the
// version; the OpenAPI document states both).

import { readFileSync } from 'node:fs'

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string, license: string }

export const VERSION: string = pkg.version
/** The package's SPDX licence expression (`UNLICENSED`: no licence is granted). */
export const LICENSE: string = pkg.license
