import { expect, test } from 'vitest'
import { inPage, PAGE, PagedColumn, WholeColumn } from './paged-column.js'

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

test('a column of whole numbers holds them in 32 bits, and only a page given a larger or negative one in 64', () => {
  const column = new WholeColumn()
  for (let i = 0; i <= 2 * PAGE; i++) {
    column.grow(i)
    column.set(i, i)
  }
  column.set(PAGE + 1, 2 ** 40)
  column.set(2 * PAGE, -3)
  column.set(3, 0xffff_ffff)
  expect([column.at(3), column.at(PAGE), column.at(PAGE + 1), column.at(PAGE + 2), column.at(2 * PAGE)]).toEqual([0xffff_ffff, PAGE, 2 ** 40, PAGE + 2, -3])
  const pages = (column as unknown as { column: PagedColumn<Uint32Array | Float64Array> }).column
  expect([0, PAGE, 2 * PAGE].map((i) => pages.pageOf(i).constructor.name)).toEqual(['Uint32Array', 'Float64Array', 'Float64Array'])
})
