import { EventEmitter } from 'node:events'
import { expect, test } from 'vitest'
import { Unsent, unsentBounds } from './unsent.js'

/** Accounts under small bounds, each connection a key whose cut closes its responses. */
function accounts (perConnection: number, total: number) {
  const cuts: string[] = []
  const unsent = new Unsent(() => ({ perConnection, total }), (why) => { cuts.push(why) })
  const responses = new Map<string, EventEmitter[]>()
  const keys = new Map<string, EventEmitter & { destroyed: boolean }>()
  const keyOf = (connection: string): EventEmitter & { destroyed: boolean } => {
    const key = keys.get(connection) ?? Object.assign(new EventEmitter(), { destroyed: false })
    keys.set(connection, key)
    return key
  }
  const send = (connection: string, bytes: number): EventEmitter => {
    const response = new EventEmitter()
    responses.set(connection, [...(responses.get(connection) ?? []), response])
    unsent.add(keyOf(connection), () => { for (const r of responses.get(connection) ?? []) r.emit('close') }, response, bytes)
    return response
  }
  return {
    unsent,
    cuts,
    send,
    isCut: (connection: string) => unsent.isCut(keyOf(connection)),
    close: (connection: string) => keyOf(connection).emit('close'),
    destroy: (connection: string) => { keyOf(connection).destroyed = true }
  }
}

test('counts an answer until its response closes', () => {
  const { unsent, send, cuts } = accounts(100, 1000)
  const one = send('a', 60)
  send('b', 30)
  expect(unsent.bytes).toBe(90)
  one.emit('close')
  expect([unsent.bytes, cuts]).toEqual([30, []])
})

test('cuts a connection past its bound, and lets go what its answers held', () => {
  const { unsent, send, cuts, isCut } = accounts(100, 1000)
  send('a', 60)
  send('b', 60)
  send('a', 60)
  expect([cuts, unsent.bytes, isCut('b')]).toEqual([['connection'], 60, false])
})

test('never cuts one answer alone for its size: the answer size bound holds it', () => {
  const { unsent, send, cuts } = accounts(100, 1000)
  send('a', 500)
  expect([cuts, unsent.bytes]).toEqual([[], 500])
})

test('past the bound in all, cuts the connection holding the most', () => {
  const { unsent, send, cuts } = accounts(100, 150)
  send('a', 40)
  send('b', 90)
  send('c', 30)
  // b's 90 let go: a's 40 and c's 30 stay.
  expect([cuts, unsent.bytes]).toEqual([['total'], 70])
})

test('a stop cuts every connection still holding answers', () => {
  const { unsent, send, cuts } = accounts(100, 1000)
  send('a', 10)
  send('b', 10)
  unsent.cutAll()
  expect([cuts.length, unsent.bytes]).toEqual([2, 0])
})

test('a cut connection stays cut until it closes, and its account goes with it', () => {
  const { send, isCut, close } = accounts(100, 1000)
  send('a', 60)
  send('a', 60)
  expect(isCut('a')).toBe(true)
  close('a')
  expect(isCut('a')).toBe(false)
})

test('an answer on a connection already destroyed holds nothing: it is dropped, and the connection never closes again', () => {
  const { unsent, send, destroy } = accounts(100, 1000)
  send('a', 10).emit('close')
  destroy('a')
  send('a', 60)
  expect(unsent.bytes).toBe(0)
})

test('a stop cuts only the connections with answers unsent, not an idle keep-alive one', () => {
  const { unsent, send, cuts } = accounts(100, 1000)
  send('a', 10).emit('close')
  send('b', 10)
  unsent.cutAll()
  expect([cuts, unsent.bytes]).toEqual([['connection'], 0])
})

test('the bounds grow with the largest answer, never below their floor', () => {
  expect(unsentBounds(1024 * 1024)).toEqual({ perConnection: 8 * 1024 * 1024, total: 64 * 1024 * 1024 })
  expect(unsentBounds(8 * 1024 * 1024)).toEqual({ perConnection: 32 * 1024 * 1024, total: 256 * 1024 * 1024 })
})
