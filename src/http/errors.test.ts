import { errorCodes, type FastifyError } from 'fastify'
import { Compile } from 'typebox/compile'
import { describe, expect, test } from 'vitest'
import { ERROR_CODES } from '../domain/wire/errors.js'
import { MICRO_CODE } from '../bus/errors.js'
import { ACCESS_CODES, clientRefusal, fastifyRefusal, HTTP_CODES, HTTP_STATUS, rawResponse } from './errors.js'
import { ErrorBody } from './schemas.js'

describe('fastify\'s own refusals keep a code of their own', () => {
  test.each([
    [new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(), 'PAYLOAD_TOO_LARGE', 413],
    [new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE('application/xml'), 'UNSUPPORTED_MEDIA_TYPE', 415],
    [new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY(), 'BAD_REQUEST', 400],
    [new errorCodes.FST_ERR_BAD_URL('/%zz'), 'BAD_REQUEST', 400],
    [new errorCodes.FST_ERR_MAX_PARAM_LENGTH('/v1/x'), 'URI_TOO_LONG', 414],
    [Object.assign(new Error('not acceptable'), { statusCode: 406 }), 'BAD_REQUEST', 400],
    [new Error('broken'), 'INTERNAL', 500]
  ])('%s', (err, code, status) => {
    const refusal = fastifyRefusal(err as FastifyError)
    expect(refusal.code).toBe(code)
    expect(HTTP_STATUS[refusal.code]).toBe(status)
  })
})

test.each([
  [{ code: 'HPE_HEADER_OVERFLOW' }, 'HEADERS_TOO_LARGE', 431],
  [{ code: 'ERR_HTTP_REQUEST_TIMEOUT' }, 'REQUEST_TIMEOUT', 408],
  [{ code: 'HPE_INVALID_METHOD' }, 'BAD_REQUEST', 400],
  [{}, 'BAD_REQUEST', 400]
])('Node\'s client error %j is %s', (err, code, status) => {
  const refusal = clientRefusal(err)
  expect([refusal.code, HTTP_STATUS[refusal.code]]).toEqual([code, status])
  const [head, body] = rawResponse(refusal).split('\r\n\r\n')
  expect(head?.split('\r\n')[0]).toMatch(new RegExp(`^HTTP/1\\.1 ${status} \\w`))
  expect(Compile(ErrorBody).Check(JSON.parse(body ?? ''))).toBe(true)
})

test('every client-error status has one code, and the error body takes every code', () => {
  const clientCodes = HTTP_CODES.filter((c) => HTTP_STATUS[c] < 500)
  expect(new Set(clientCodes.map((c) => HTTP_STATUS[c])).size).toBe(clientCodes.length)
  const check = Compile(ErrorBody)
  for (const code of HTTP_CODES) expect(check.Check({ error: { code, message: 'm' } }), code).toBe(true)
  expect(check.Check({ error: { code: 'TEAPOT', message: 'm' } })).toBe(false)
})

test('the error body lists each code the gateway maps to a status once: the domain\'s and the gateway\'s own', () => {
  expect([...HTTP_CODES].sort()).toEqual(Object.keys(HTTP_STATUS).sort())
  expect(new Set(HTTP_CODES).size).toBe(HTTP_CODES.length)
  expect(HTTP_CODES).toEqual(expect.arrayContaining([...ERROR_CODES, ...ACCESS_CODES]))
})

test('a token\'s refusals are the gateway\'s: neither the domain nor the bus has a code for them', () => {
  for (const code of ACCESS_CODES) {
    expect(ERROR_CODES as readonly string[]).not.toContain(code)
    expect(Object.keys(MICRO_CODE)).not.toContain(code)
  }
  expect(Object.keys(MICRO_CODE).sort()).toEqual([...ERROR_CODES].sort())
})
