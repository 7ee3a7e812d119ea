// An entry is serialized once, when it arrives, into the JSON it will be answered as; answers are
// then concatenations of ready bytes (no per-request serialization of values).

import { FIELDS, isDecoded, type What } from './buckets.js'

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/** The JSON of one value: `"value":…` when it is JSON, else `raw`/`rawBase64` and `problem`. */
export function valueJson (value: Uint8Array): string {
  let text: string
  try {
    text = strictUtf8.decode(value)
  } catch {
    return `"rawBase64":${JSON.stringify(Buffer.from(value).toString('base64'))},"problem":"the value is not UTF-8 text, so not JSON; its bytes are in rawBase64"`
  }
  if (text.trim() === '') return `"raw":${JSON.stringify(text)},"problem":"the value is empty, not JSON"`
  try {
    JSON.parse(text)
  } catch (err) {
    return `"raw":${JSON.stringify(text)},"problem":${JSON.stringify(`the value is not JSON: ${(err as Error).message}`)}`
  }
  return `"value":${text.trim()}`
}

/**
 * The answer JSON of one in-shape entry, its fields in the order of the bucket's shape. An
 * in-shape key and its tokens hold only characters JSON need not escape; decoded collection names
 * may hold any.
 */
export function entryJson (what: What, key: string, fields: readonly string[], value: Uint8Array, revision: number, updated: Date): string {
  let out = `{"key":"${key}"`
  FIELDS[what].forEach((name, i) => { out += isDecoded(name) ? `,"${name}":${JSON.stringify(fields[i])}` : `,"${name}":"${fields[i] as string}"` })
  return `${out},${valueJson(value)},"revision":${revision},"updated":"${updated.toISOString()}"}`
}

export function outOfShapeJson (key: string, revision: number, reason: string): string {
  return `{"key":${JSON.stringify(key)},"revision":${revision},"reason":${JSON.stringify(reason)}}`
}
