// `npm run openapi`: writes the documents the code generates: the OpenAPI document to
// openapi/openapi.json, the AsyncAPI document to asyncapi/asyncapi.json, and the TypeScript types
// made from each to clients/typescript/ (tests fail when a committed file drifts from them).

import { writeFile } from 'node:fs/promises'
import { asyncApiText } from '../src/http/asyncapi-document.js'
import { openApiText } from '../src/http/openapi-document.js'
import { VERSION } from '../src/version.js'
import { asyncApiTypes, openApiTypes } from './openapi-types.js'

const openApi = await openApiText(VERSION)
const asyncApi = asyncApiText(VERSION)
const written: Array<[URL, string]> = [
  [new URL('../openapi/openapi.json', import.meta.url), openApi],
  [new URL('../asyncapi/asyncapi.json', import.meta.url), asyncApi],
  [new URL('../clients/typescript/openapi.ts', import.meta.url), await openApiTypes(openApi)],
  [new URL('../clients/typescript/asyncapi.ts', import.meta.url), await asyncApiTypes(asyncApi)]
]
for (const [target, text] of written) {
  await writeFile(target, text)
  process.stdout.write(`wrote ${target.pathname}\n`)
}
