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

/** How many more nodes each "show more" shows: a table of thousands of rows is slow to lay out. */
export const NODES_SHOWN = 200

/**
 * The nodes' table body, sorted by node as the service sorts them, changed row by row: the first
 * `limit` nodes show, the others are counted until the person asks for them.
 */
export class NodesTable {
  /** @param {HTMLTableSectionElement} body */
  constructor (body) {
    this.body = body
    this.limit = NODES_SHOWN
    /** @type {Map<string, any>} the rows last drawn from */
    this.rows = new Map()
    /** @type {string[]} every node, sorted */
    this.order = []
    /** @type {Map<string, HTMLTableRowElement>} the rows shown: the first `limit` of `order` */
    this.shown = new Map()
    /** @type {string | undefined} */
    this.picked = undefined
  }

  /**
   * Draws the rows of `rows` that `changed` names (every row when `all`).
   * @param {Map<string, any>} rows
   * @param {{ all: boolean, keys: Set<string> }} changed
   */
  draw (rows, changed) {
    this.rows = rows
    if (changed.all) {
      this.order = [...rows.keys()].sort(compare)
      this.shown = new Map(this.order.slice(0, this.limit).map((node) => [node, this.#row(node)]))
      this.body.replaceChildren(...this.shown.values())
      return
    }
    for (const node of changed.keys) {
      const at = this.#at(node)
      const known = this.order[at] === node
      const old = this.shown.get(node)
      if (!rows.has(node)) {
        if (!known) continue
        this.order.splice(at, 1)
        old?.remove()
        this.shown.delete(node)
        // The next node moves up into sight.
        const next = this.order[this.limit - 1]
        if (old !== undefined && next !== undefined && !this.shown.has(next)) this.#show(next, null)
      } else if (old !== undefined) {
        const tr = this.#row(node)
        old.replaceWith(tr)
        this.shown.set(node, tr)
      } else if (!known) {
        this.order.splice(at, 0, node)
        if (at >= this.limit) continue
        this.#show(node, this.shown.get(this.order[at + 1] ?? '') ?? null)
        // The last node shown moves out of sight.
        const last = this.order[this.limit]
        if (last !== undefined && this.shown.has(last)) {
          this.shown.get(last)?.remove()
          this.shown.delete(last)
        }
      }
    }
  }

  /** Shows the next NODES_SHOWN nodes. */
  more () {
    const from = this.limit
    this.limit += NODES_SHOWN
    for (const node of this.order.slice(from, this.limit)) this.#show(node, null)
  }

  /** Marks the picked node's row. */
  pick (node, rows) {
    const before = this.picked
    this.picked = node
    this.draw(rows, { all: false, keys: new Set([before, node].filter((n) => n !== undefined && rows.has(n))) })
  }

  #row (node) {
    return /** @type {HTMLTableRowElement} */ (nodeRow(this.rows.get(node), node === this.picked))
  }

  /** Shows `node`'s row before `before` (null: last). */
  #show (node, before) {
    const tr = this.#row(node)
    this.body.insertBefore(tr, before)
    this.shown.set(node, tr)
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
