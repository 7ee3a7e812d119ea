// An entry holds its value as it arrived (text, or bytes when they are not UTF-8) and is serialized
// into the JSON it is answered as the first time an answer takes it; answers are then
// concatenations of ready bytes. Serializing on arrival instead made a cold start pay for every
// entry's JSON check and string (half the load's own work at 300k keys), and held ~300 bytes an
// entry for entries nobody asked about.

import { fieldsOf, FIELDS, isDecoded, type What } from './buckets.js'

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/** A value as held until its entry is answered: its text, or a copy of its bytes when they are not UTF-8. */
export type HeldValue = string | Uint8Array

export function holdValue (value: Uint8Array): HeldValue {
  try {
    return strictUtf8.decode(value)
  } catch {
    // A copy: the message's bytes may be a view into the connection's read buffer.
    return value.slice()
  }
}

/** The JSON of one value: `"value":…` when it is JSON, else `raw`/`rawBase64` and `problem`. */
export function valueJson (value: HeldValue): string {
  if (typeof value !== 'string') {
    return `"rawBase64":${JSON.stringify(Buffer.from(value).toString('base64'))},"problem":"the value is not UTF-8 text, so not JSON; its bytes are in rawBase64"`
  }
  if (value.trim() === '') return `"raw":${JSON.stringify(value)},"problem":"the value is empty, not JSON"`
  try {
    JSON.parse(value)
  } catch (err) {
    return `"raw":${JSON.stringify(value)},"problem":${JSON.stringify(`the value is not JSON: ${(err as Error).message}`)}`
  }
  return `"value":${value.trim()}`
}

/** The start of an entry's JSON, up to its value: the key and its fields in the order of the bucket's shape. */
export function entryHead (what: What, key: string, fields: readonly string[]): string {
  // An in-shape key and its tokens hold only characters JSON need not escape; decoded collection
  // names may hold any.
  let out = `{"key":"${key}"`
  FIELDS[what].forEach((name, i) => { out += isDecoded(name) ? `,"${name}":${JSON.stringify(fields[i])}` : `,"${name}":"${fields[i] as string}"` })
  return out
}

/** One in-shape entry of a bucket. */
export class StoredEntry {
  private value: HeldValue | undefined
  private serialized: string | undefined
  private size = 0

  constructor (
    readonly what: What,
    readonly key: string,
    readonly revision: number,
    value: HeldValue,
    /** When it was written (ms since the epoch). */
    readonly updated: number
  ) {
    this.value = value
  }

  /**
   * The key's fields in the order of the bucket's shape, decoded: read from the key when asked
   * (indexing, a filter no index answers exactly, serializing) rather than held: an array and a
   * string an entry were ~130 bytes of RSS each at 300k keys.
   */
  get fields (): string[] {
    return fieldsOf(this.what, this.key)
  }

  /** Its answer JSON, made the first time it is asked for; the value it is made from is then let go. */
  get json (): string {
    return this.serialized ?? this.serialize()
  }

  /** The UTF-8 length of its answer JSON. */
  get bytes (): number {
    if (this.serialized === undefined) this.serialize()
    return this.size
  }

  private serialize (): string {
    const json = `${entryHead(this.what, this.key, this.fields)},${valueJson(this.value as HeldValue)},"revision":${this.revision},"updated":"${new Date(this.updated).toISOString()}"}`
    this.serialized = json
    this.size = Buffer.byteLength(json)
    this.value = undefined
    return json
  }
}

export function outOfShapeJson (key: string, revision: number, reason: string): string {
  return `{"key":${JSON.stringify(key)},"revision":${revision},"reason":${JSON.stringify(reason)}}`
}
