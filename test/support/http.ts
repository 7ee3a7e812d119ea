// The suite's HTTP client: undici's `request`, with every JSON body checked against the OpenAPI
// document's schema for its route and status (wire.ts) before the test sees it. An event stream's
// 200 is passed through unread: the stream reader (sse.ts) checks each event.

import { Readable } from 'node:stream'
import { request as undiciRequest, type Dispatcher } from 'undici'
import { checkHttpBody } from './wire.js'

type Options = NonNullable<Parameters<typeof undiciRequest>[1]>
type Body = Dispatcher.ResponseData['body']

/** A body read whole, readable again as undici's is: text, json, bytes, a stream, or dumped. */
function bodyOf (bytes: Buffer): Body {
  const body = Readable.from(bytes.length === 0 ? [] : [bytes]) as unknown as Record<string, unknown>
  body['text'] = async () => bytes.toString('utf8')
  body['json'] = async () => JSON.parse(bytes.toString('utf8'))
  body['bytes'] = async () => new Uint8Array(bytes)
  body['arrayBuffer'] = async () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)
  body['blob'] = async () => new Blob([bytes])
  body['dump'] = async () => {}
  return body as unknown as Body
}

export async function request (url: string | URL, options: Options = {}): Promise<Dispatcher.ResponseData<unknown>> {
  const res = await undiciRequest(url, options)
  const contentType = res.headers['content-type']
  const type = Array.isArray(contentType) ? contentType[0] : contentType
  if (res.statusCode === 200 && /^text\/event-stream\b/.test(type ?? '')) return res
  const bytes = Buffer.from(await res.body.arrayBuffer())
  await checkHttpBody(options.method ?? 'GET', String(url), res.statusCode, type, bytes.toString('utf8'))
  return Object.assign(res, { body: bodyOf(bytes) })
}

/** What fastify's `inject` answered, checked as `request` checks an answer over the network. */
export interface Injected { statusCode: number, headers: Record<string, unknown>, body: string }

export async function checkInjected<R extends Injected> (method: string, url: string, res: R): Promise<R> {
  const type = res.headers['content-type']
  await checkHttpBody(method, new URL(url, 'http://inject').href, res.statusCode, typeof type === 'string' ? type : undefined, res.body)
  return res
}
