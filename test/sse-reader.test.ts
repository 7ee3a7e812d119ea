// The tests' event-stream reader reads a stream as a browser does, however the bytes are cut into
// chunks: a CRLF split between two chunks is one line end, a UTF-8 character split between two
// chunks is one character. No server: the reader is fed the chunks directly.

import { expect, test } from 'vitest'
import { SseParser } from './support/sse.js'

const utf8 = new TextEncoder()

test('a CRLF split across two chunks ends one line, not two', () => {
  const parser = new SseParser()
  for (const chunk of ['event: put\r', '\ndata: {"a":1}\r', '\n\r', '\nevent: synced\r\ndata: {}\r\n\r\n']) parser.feed(utf8.encode(chunk))
  expect(parser.events).toEqual([{ event: 'put', data: '{"a":1}' }, { event: 'synced', data: '{}' }])
})

test('a UTF-8 character split across two chunks is read whole', () => {
  const bytes = utf8.encode('event: put\ndata: {"collection":"shell:zsh:é"}\nid: 7-1\n\n')
  const at = bytes.indexOf(0xc3) + 1
  const parser = new SseParser()
  parser.feed(bytes.subarray(0, at))
  parser.feed(bytes.subarray(at))
  expect(parser.events).toEqual([{ event: 'put', data: '{"collection":"shell:zsh:é"}', id: '7-1' }])
})

test('comments, retry, an empty id and data on several lines, as EventSource reads them', () => {
  const parser = new SseParser()
  parser.feed(':hello\n\nretry: 2000\n\nevent: reset\nid:\ndata: a\ndata:  b\n\n')
  expect(parser).toMatchObject({ comments: 1, retry: 2000, events: [{ event: 'reset', id: '', data: 'a\n b' }] })
})

test('an event whose data does not fit its schema is said, naming the event', () => {
  const parser = new SseParser('needs')
  parser.feed('event: synced\ndata: {"cursor":"1-2","total":1,"stale":false}\n\nevent: synced\ndata: {"cursor":1}\n\n')
  expect(parser.events).toHaveLength(2)
  expect(parser.faults).toEqual([expect.stringMatching(/^a needs stream's synced event: the body does not fit its published schema/)])
})
