import { expect, test } from 'vitest'
import { inPage, PAGE, PagedColumn } from './paged-column.js'

test('a page is made when an index starts one, and holds the indexes up to the next', () => {
  const made: number[] = []
  const column = new PagedColumn(() => { made.push(made.length); return new Float64Array(2 * PAGE) })
  for (let i = 0; i <= PAGE; i++) {
    column.grow(i)
    column.pageOf(i)[2 * inPage(i) + 1] = i
  }
  expect(made).toHaveLength(2)
  expect([column.pageOf(0)[1], column.pageOf(PAGE - 1)[2 * (PAGE - 1) + 1], column.pageOf(PAGE)[1]]).toEqual([0, PAGE - 1, PAGE])
  expect(column.pageOf(PAGE - 1)).not.toBe(column.pageOf(PAGE))
  expect(inPage(PAGE + 3)).toBe(3)
})

test('a page replaced is the one its indexes are read from after', () => {
  const column = new PagedColumn<Uint32Array | Float64Array>(() => new Uint32Array(PAGE))
  for (let i = 0; i <= PAGE; i++) column.grow(i)
  column.pageOf(PAGE + 1)[1] = 7
  column.replace(PAGE + 1, Float64Array.from(column.pageOf(PAGE + 1)))
  column.pageOf(PAGE + 2)[2] = 2 ** 40
  expect([column.pageOf(PAGE)[1], column.pageOf(PAGE)[2]]).toEqual([7, 2 ** 40])
  expect(column.pageOf(0)).toBeInstanceOf(Uint32Array)
})
