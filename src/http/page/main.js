// The page at GET /: who it reads as (asking for a token when the gateway wants one), then three
// streams of live rows: every node, the modules that wait across the mesh, and the picked node's
// modules. It draws at most once a frame, only what changed.

import { Rows } from './rows.js'
import { ageOf, h, moduleRow, NodesTable, STATES, tickAges } from './tables.js'

/** Where the tab keeps the token: sessionStorage lives as long as the tab, and is never sent by itself. */
const TOKEN = 'mesh-provisioner.token'
/** How many waiting modules are listed; the rest are counted. */
const WAITING_SHOWN = 50
/** How long the page waits before asking again what the service refused or did not answer. */
const AGAIN_MS = 5000

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id))
/** The body of the table `id`. */
const bodyOf = (id) => /** @type {HTMLTableSectionElement} */ ($(id).querySelector('tbody'))

/** @type {string | undefined} */
let token = sessionStorage.getItem(TOKEN) ?? undefined
/** @type {{ nodes: Rows, waiting: Rows, picked?: Rows } | undefined} */
let streams
/** @type {string | undefined} the node whose modules show */
let picked
let frame = 0
const nodesTable = new NodesTable(bodyOf('nodes'))

/** Headers that present the token, when there is one. */
function authorization (candidate = token) {
  return candidate === undefined ? {} : { authorization: `Bearer ${candidate}` }
}

/** An error body's message, or the status when the body is not one. */
async function messageOf (response) {
  try {
    return (await response.json()).error.message
  } catch {
    return `the service answered ${response.status}`
  }
}

/**
 * Who `candidate` reads as: its token document, or why the gateway refuses it (`status` 0: it did not answer).
 * @returns {Promise<{ self: any } | { status: number, message: string }>}
 */
async function readerOf (candidate) {
  try {
    const response = await fetch('/v1/token/self', { headers: authorization(candidate), cache: 'no-store' })
    if (response.ok) return { self: await response.json() }
    return { status: response.status, message: await messageOf(response) }
  } catch (err) {
    return { status: 0, message: `the service does not answer (${err.message})` }
  }
}

async function start () {
  const reader = await readerOf(token)
  if ('self' in reader) return follow(reader.self)
  if (reader.status === 401) return askToken(token === undefined ? undefined : `The gateway no longer takes the token of this tab: ${reader.message}.`)
  say('lost', `${capital(reader.message)}; trying again in ${AGAIN_MS / 1000} s.`)
  setTimeout(start, AGAIN_MS)
}

function askToken (why) {
  stop()
  forgetToken()
  $('mesh').hidden = true
  $('forget').hidden = true
  $('reader').textContent = ''
  $('status').hidden = true
  $('token').hidden = false
  $('token-why').textContent = why ?? 'This gateway shows its answers only to a bearer token.'
  $('token-input').focus()
}

function forgetToken () {
  token = undefined
  sessionStorage.removeItem(TOKEN)
}

$('token').addEventListener('submit', async (event) => {
  event.preventDefault()
  const input = /** @type {HTMLInputElement} */ ($('token-input'))
  const candidate = input.value.trim()
  const reader = await readerOf(candidate)
  if (!('self' in reader)) {
    $('token-error').textContent = reader.status === 401 ? `Not taken: ${reader.message}.` : `${capital(reader.message)}.`
    input.select()
    return
  }
  token = candidate
  sessionStorage.setItem(TOKEN, candidate)
  input.value = ''
  $('token-error').textContent = ''
  $('token').hidden = true
  follow(reader.self)
  $('nodes-heading').focus()
})

$('forget').addEventListener('click', () => askToken(undefined))

$('show-more').addEventListener('click', () => {
  nodesTable.more()
  draw()
})

/** Shows the mesh as `self` reads it, and follows its rows. */
function follow (self) {
  $('token').hidden = true
  $('mesh').hidden = false
  $('status').hidden = false
  $('forget').hidden = token === undefined
  const nodes = self.nodes === '*' ? 'every node' : `${self.nodes.length === 1 ? 'node' : 'nodes'} ${self.nodes.join(', ')}`
  $('reader').textContent = self.name === null ? '' : `Reading as ${self.name}: ${nodes}`
  stop()
  // What another token read is not shown while this one's snapshot comes.
  nodesTable.draw(new Map(), { all: true, keys: new Set() })
  bodyOf('waiting').replaceChildren()
  $('summary').replaceChildren()
  streams = {
    nodes: rowsOf('/v1/nodes/events', []),
    waiting: rowsOf('/v1/modules/events', [['state', 'pending'], ['state', 'unapplied']])
  }
  pick()
}

function stop () {
  for (const rows of Object.values(streams ?? {})) rows.close()
  streams = undefined
}

/** A stream of rows, drawn as it changes; a refused one says why, or is asked again. */
function rowsOf (path, params) {
  const rows = new Rows({
    path,
    params,
    token,
    keyOf: (row) => row.module === undefined ? row.node : `${row.node}.${row.module}`,
    changed: draw,
    refused: async () => {
      const reader = await readerOf(token)
      if ('status' in reader && reader.status === 401) return askToken(`The gateway no longer takes the token of this tab: ${reader.message}.`)
      if ('self' in reader) {
        const response = await fetch(rows.asked(), { headers: authorization(), cache: 'no-store' }).catch(() => undefined)
        // Refused for good (a node this token does not read, say): told where the rows would be.
        if (response !== undefined && response.status >= 400 && response.status < 500 && response.status !== 429) {
          rows.refusal = await messageOf(response)
          return draw()
        }
      }
      rows.lost = true
      draw()
      setTimeout(() => { if (Object.values(streams ?? {}).includes(rows)) rows.open() }, AGAIN_MS)
    }
  })
  return rows
}

/** The node the URL's fragment names (#node=ace), or none. */
function pickedNode () {
  const match = /^#node=(.+)$/.exec(location.hash)
  return match === null ? undefined : decodeURIComponent(match[1])
}

/** Follows the modules of the node the fragment names, if it changed. */
function pick () {
  if (streams === undefined) return
  const node = pickedNode()
  if (node === picked && (node === undefined || streams.picked !== undefined)) return
  streams.picked?.close()
  delete streams.picked
  picked = node
  nodesTable.pick(node, streams.nodes.rows)
  $('picked').hidden = node === undefined
  if (node === undefined) return draw()
  $('picked-heading').textContent = `Modules on ${node}`
  bodyOf('picked-modules').replaceChildren()
  streams.picked = rowsOf('/v1/modules/events', [['node', node]])
  draw()
  $('picked-heading').focus()
}

window.addEventListener('hashchange', () => {
  // Closed from inside the node's section (its link goes away with it): the focus goes to the nodes.
  const fromPicked = $('picked').contains(document.activeElement) || document.activeElement === document.body
  pick()
  if (pickedNode() === undefined && fromPicked) $('nodes-heading').focus()
})

/** Draws at the next frame what changed since the last. */
function draw () {
  if (frame === 0) frame = requestAnimationFrame(drawNow)
}

function drawNow () {
  frame = 0
  if (streams === undefined) return
  const { nodes, waiting, picked: pickedRows } = streams
  nodesTable.draw(nodes.rows, nodes.take())
  $('nodes-empty').hidden = !nodes.synced || nodes.rows.size > 0
  $('nodes-more').hidden = nodesTable.shown.size >= nodesTable.order.length
  $('nodes-count').textContent = `Showing ${nodesTable.shown.size} of ${nodesTable.order.length} nodes.`
  drawSummary(nodes)
  const waited = waiting.take()
  if (waited.all || waited.keys.size > 0) drawWaiting(waiting)
  if (pickedRows !== undefined) drawPicked(pickedRows)
  drawStatus(Object.values(streams))
}

/** The mesh in one line: its nodes, its modules per state, what waits and since when. */
function drawSummary (nodes) {
  if (!nodes.synced) return
  const sum = { modules: 0, waiting: 0, unanswered: 0, outOfShape: 0 }
  const states = Object.fromEntries(STATES.map((s) => [s, 0]))
  let since
  for (const row of nodes.rows.values()) {
    for (const state of STATES) states[state] += row.modules?.[state] ?? 0
    sum.waiting += row.waiting ?? 0
    sum.unanswered += row.unanswered ?? 0
    sum.outOfShape += row.outOfShape ?? 0
    if (row.waitingSince != null && (since === undefined || row.waitingSince < since)) since = row.waitingSince
  }
  const parts = [
    h('strong', {}, plural(nodes.rows.size, 'node')),
    ...STATES.map((s) => h('span', { class: `state ${s}` }, `${states[s]} ${s}`))
  ]
  parts.push(since === undefined ? h('span', {}, 'nothing waits') : h('span', {}, `${plural(sum.waiting, 'need')} waiting, the oldest for `, ageOf(since)))
  if (sum.unanswered > 0) parts.push(h('span', { class: 'bad' }, `${plural(sum.unanswered, 'need')} no domain answers`))
  if (sum.outOfShape > 0) parts.push(h('span', {}, `${plural(sum.outOfShape, 'key')} out of shape`))
  $('summary').replaceChildren(...parts.flatMap((p, i) => i === 0 ? [p] : [' · ', p]))
  document.title = sum.waiting > 0 ? `(${sum.waiting}) mesh-provisioner` : 'mesh-provisioner'
}

/** The modules that wait across the mesh, oldest first. */
function drawWaiting (waiting) {
  if (!waiting.synced) return
  const rows = [...waiting.rows.values()].sort((a, b) => (a.waitingSince ?? '\uffff') < (b.waitingSince ?? '\uffff') ? -1 : (a.waitingSince ?? '\uffff') > (b.waitingSince ?? '\uffff') ? 1 : 0)
  bodyOf('waiting').replaceChildren(...rows.slice(0, WAITING_SHOWN).map((row) => moduleRow(row, true)))
  $('waiting').hidden = rows.length === 0
  $('waiting-empty').hidden = rows.length > 0
  $('waiting-more').hidden = rows.length <= WAITING_SHOWN
  $('waiting-more').textContent = `and ${rows.length - WAITING_SHOWN} more, younger`
}

/** The picked node's modules, or why they cannot show. */
function drawPicked (rows) {
  rows.take()
  const status = $('picked-status')
  const table = $('picked-modules')
  if (rows.refusal !== undefined) {
    status.textContent = `${capital(rows.refusal)}.`
  } else if (rows.synced && rows.rows.size === 0) {
    status.textContent = 'No module: no need or applied entry names this node.'
  } else {
    status.textContent = ''
  }
  status.hidden = status.textContent === ''
  table.hidden = !rows.synced || rows.rows.size === 0 || rows.refusal !== undefined
  bodyOf('picked-modules').replaceChildren(...[...rows.rows.values()].map((row) => moduleRow(row, false)))
}

/** Says whether the page is live, behind (the service answers stale) or cut off (the stream is lost). */
function drawStatus (all) {
  const lost = all.filter((rows) => rows.lost && rows.refusal === undefined)
  const stale = all.find((rows) => rows.stale !== undefined)
  if (lost.length > 0) {
    say('lost', `Lost the live stream from the service; trying again. What shows is as it was at ${lostAt ??= new Date().toLocaleTimeString()}.`)
    return
  }
  lostAt = undefined
  if (stale !== undefined) say('stale', `The service answers stale: ${stale.stale}.`)
  else if (all.some((rows) => !rows.synced && rows.refusal === undefined)) say('connecting', 'Loading the mesh…')
  else say('live', 'Live: every change shows as it is written.')
}

/** @type {string | undefined} when the stream was lost */
let lostAt

function say (kind, text) {
  const status = $('status')
  status.hidden = false
  status.className = kind
  if (status.textContent !== text) status.textContent = text
}

function plural (n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}

function capital (text) {
  return text.charAt(0).toUpperCase() + text.slice(1)
}

setInterval(tickAges, 10_000)
void start()
