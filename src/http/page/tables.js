// The page's pieces of DOM, built from rows with text nodes only (a key's tokens are data, never
// markup), and the nodes' table, kept in order and changed row by row: a write on one node
// touches one row of the page, however many nodes the mesh has.

import { age } from './age.js'

export const STATES = ['applied', 'pending', 'unapplied', 'orphaned']

/**
 * An element with attributes and children (strings become text).
 * @param {string} tag
 * @param {Record<string, string>} [attributes]
 * @param {Array<Node | string>} children
 * @returns {HTMLElement}
 */
export function h (tag, attributes = {}, ...children) {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value)
  element.append(...children)
  return element
}

/** The page's link to a node: its modules, picked by the URL's fragment (which never holds a token). */
export function nodeHref (node) {
  return `#node=${encodeURIComponent(node)}`
}

/**
 * How long ago `since` was, kept current by `tickAges`; "—" for none.
 * @param {string | null | undefined} since
 */
export function ageOf (since) {
  if (since === null || since === undefined) return h('span', { class: 'none' }, '—')
  return h('time', { datetime: since, title: new Date(since).toLocaleString(), 'data-since': since }, age(since, Date.now()))
}

/** Writes every shown age again: they grow while nothing is written. */
export function tickAges () {
  const now = Date.now()
  for (const time of document.querySelectorAll('time[data-since]')) {
    time.textContent = age(/** @type {string} */ (time.getAttribute('data-since')), now)
  }
}

/** A count, dimmed when 0, marked when it is what a person should look at. */
export function count (n, mark = '') {
  return h('td', { class: n === 0 ? 'num zero' : `num ${mark}` }, String(n))
}

export function stateBadge (state) {
  return h('span', { class: `state ${state}` }, state)
}

/** The node's modules per state as a bar (its widths set through the DOM, which the page's policy allows). */
function stateBar (modules) {
  const bar = h('span', { class: 'bar', 'aria-hidden': 'true' })
  for (const state of STATES) {
    const n = modules[state] ?? 0
    if (n === 0) continue
    const part = h('span', { class: state })
    part.style.flexGrow = String(n)
    bar.append(part)
  }
  return bar
}

/**
 * One node's row of the nodes table.
 * @param {any} row
 * @param {boolean} picked
 */
function nodeRow (row, picked) {
  const modules = row.modules ?? {}
  const link = h('a', { href: nodeHref(row.node) }, row.node)
  if (picked) link.setAttribute('aria-current', 'true')
  return h('tr', picked ? { class: 'picked' } : {},
    h('th', { scope: 'row' }, link),
    h('td', {}, stateBar(modules)),
    count(modules.applied ?? 0),
    count(modules.pending ?? 0, 'warn'),
    count(modules.unapplied ?? 0, 'warn'),
    count(modules.orphaned ?? 0, 'note'),
    count(row.waiting ?? 0, 'warn'),
    h('td', {}, ageOf(row.waitingSince)),
    count(row.unanswered ?? 0, 'bad'),
    count(row.outOfShape ?? 0, 'note'),
    h('td', {}, ageOf(row.updated)))
}

/** The nodes' table body, sorted by node as the service sorts them, changed row by row. */
export class NodesTable {
  /** @param {HTMLTableSectionElement} body */
  constructor (body) {
    this.body = body
    /** @type {string[]} the nodes shown, sorted */
    this.order = []
    /** @type {Map<string, HTMLTableRowElement>} */
    this.shown = new Map()
    /** @type {string | undefined} */
    this.picked = undefined
  }

  /**
   * Draws the rows of `rows` that `keys` names (every row when `all`).
   * @param {Map<string, any>} rows
   * @param {{ all: boolean, keys: Set<string> }} changed
   */
  draw (rows, changed) {
    if (changed.all) {
      this.order = [...rows.keys()].sort(compare)
      this.shown = new Map(this.order.map((node) => [node, /** @type {HTMLTableRowElement} */ (nodeRow(rows.get(node), node === this.picked))]))
      this.body.replaceChildren(...this.shown.values())
      return
    }
    for (const node of changed.keys) {
      const row = rows.get(node)
      const old = this.shown.get(node)
      if (row === undefined) {
        old?.remove()
        this.shown.delete(node)
        if (old !== undefined) this.order.splice(this.#at(node), 1)
        continue
      }
      const tr = /** @type {HTMLTableRowElement} */ (nodeRow(row, node === this.picked))
      if (old !== undefined) {
        old.replaceWith(tr)
      } else {
        const at = this.#at(node)
        this.order.splice(at, 0, node)
        this.body.insertBefore(tr, this.shown.get(this.order[at + 1] ?? '') ?? null)
      }
      this.shown.set(node, tr)
    }
  }

  /** Marks the picked node's row. */
  pick (node, rows) {
    const before = this.picked
    this.picked = node
    this.draw(rows, { all: false, keys: new Set([before, node].filter((n) => n !== undefined && rows.has(n))) })
  }

  /** Where `node` is, or would be, in the order. */
  #at (node) {
    let low = 0
    let high = this.order.length
    while (low < high) {
      const mid = (low + high) >> 1
      if (compare(this.order[mid], node) < 0) low = mid + 1
      else high = mid
    }
    return low
  }
}

export function compare (a, b) {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * A row of a table of modules.
 * @param {any} row
 * @param {boolean} withNode the node's column too (the modules that wait across the mesh)
 */
export function moduleRow (row, withNode) {
  const cells = withNode
    ? [h('td', {}, ageOf(row.waitingSince)), h('th', { scope: 'row' }, h('a', { href: nodeHref(row.node) }, row.node), h('span', { class: 'sep' }, ' / '), row.module)]
    : [h('th', { scope: 'row' }, row.module)]
  cells.push(h('td', {}, stateBadge(row.state)))
  if (!withNode) cells.push(count(row.needs ?? 0))
  cells.push(count(row.waiting ?? 0, 'warn'))
  if (!withNode) cells.push(h('td', {}, ageOf(row.waitingSince)))
  cells.push(count(row.unanswered ?? 0, 'bad'))
  if (!withNode) cells.push(h('td', {}, ageOf(row.applied?.updated)), h('td', {}, ageOf(row.needsUpdated)))
  return h('tr', { class: row.state }, ...cells)
}
