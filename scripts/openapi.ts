// `npm run openapi`: writes the OpenAPI document the code generates to openapi/openapi.json (a test
// fails when the committed file drifts from it).

import { writeFile } from 'node:fs/promises'
import { openApiText } from '../src/http/openapi-document.js'
import { VERSION } from '../src/version.js'

const target = new URL('../openapi/openapi.json', import.meta.url)
await writeFile(target, await openApiText(VERSION))
process.stdout.write(`wrote ${target.pathname}\n`)
