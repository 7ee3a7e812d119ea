// One stream of live rows (GET /v1/nodes/events or /v1/modules/events) held as a map of rows: its
// snapshot, then each row that changes or leaves, and whether the service answers stale or the
// stream is lost. The page draws from the map; this module only keeps it.

/** The events a stream of rows sends, beside the comments that keep it open. */
const EVENTS = ['put', 'delete', 'synced', 'stale', 'live', 'reset']

/** Said of a stale answer that gives no reason. */
const STALE = 'what shows may be behind what NATS holds'

/**
 * @typedef {object} RowsOptions
 * @property {string} path the stream's route, like /v1/nodes/events
 * @property {Array<[string, string]>} params its filters
 * @property {string | undefined} token a bearer token, sent as access_token (an EventSource sets no header)
 * @property {(row: any) => string} keyOf the row's key: a node, or node.module
 * @property {() => void} changed called when a row, or the stream's state, changed
 * @property {() => void} refused called when the service refused the stream (its reason is asked with the same request)
 */

export class Rows {
  /** @param {RowsOptions} options */
  constructor (options) {
    this.options = options
    /** @type {Map<string, any>} the rows as of the last `synced` and the changes since */
    this.rows = new Map()
    /** @type {Set<string>} keys put or deleted since the page last drew them */
    this.touched = new Set()
    /** Whether every row may have changed (a new snapshot): the page draws them all. */
    this.redraw = true
    /** Whether a snapshot has arrived. */
    this.synced = false
    /** @type {string | undefined} why the service answers stale, while it does */
    this.stale = undefined
    /** Whether the connection is lost and the browser is trying again. */
    this.lost = false
    /** @type {string | undefined} why the service refused the stream, once the page knows */
    this.refusal = undefined
    /** @type {Map<string, any> | undefined} a snapshot being received, shown at its `synced` */
    this.incoming = undefined
    /** @type {EventSource | undefined} */
    this.source = undefined
    this.open()
  }

  /** The request's URL with its filters and the token (never shown: the page's own URL holds none). */
  url () {
    const query = new URLSearchParams(this.options.params)
    if (this.options.token !== undefined) query.append('access_token', this.options.token)
    const text = query.toString()
    return text === '' ? this.options.path : `${this.options.path}?${text}`
  }

  /** The same request as a JSON list, one row long: its refusal is the stream's, said in a body. */
  asked () {
    const query = new URLSearchParams(this.options.params)
    query.append('limit', '1')
    return `${this.options.path.replace(/\/events$/, '')}?${query}`
  }

  /** Opens the stream afresh: a snapshot, shown once whole. */
  open () {
    this.close()
    this.refusal = undefined
    this.incoming = new Map()
    const source = new EventSource(this.url())
    this.source = source
    for (const type of EVENTS) source.addEventListener(type, (event) => this.on(type, JSON.parse(/** @type {MessageEvent} */ (event).data)))
    source.onopen = () => {
      // A connection made again before the snapshot was whole sends it again from its start.
      if (this.incoming !== undefined) this.incoming = new Map()
      this.lost = false
      this.options.changed()
    }
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        // Refused (an HTTP error, not a lost connection): the browser does not try again by itself.
        this.close()
        this.options.refused()
      } else {
        this.lost = true
      }
      this.options.changed()
    }
  }

  close () {
    this.source?.close()
    this.source = undefined
  }

  /**
   * @param {string} type
   * @param {any} data
   */
  on (type, data) {
    switch (type) {
      case 'put':
        this.#put(this.options.keyOf(data), data)
        break
      case 'delete':
        this.#put(this.options.keyOf(data), undefined)
        break
      case 'synced':
        if (this.incoming !== undefined) {
          this.rows = this.incoming
          this.incoming = undefined
          this.redraw = true
        }
        this.synced = true
        if (data.stale === true) this.stale ??= STALE
        else this.stale = undefined
        break
      case 'stale':
        this.stale = data.reason ?? STALE
        break
      case 'live':
        this.stale = undefined
        break
      case 'reset':
        // A bucket created again: the snapshot that follows replaces every row.
        this.incoming = new Map()
        break
    }
    this.options.changed()
  }

  /**
   * @param {string} key
   * @param {any} row undefined: the row left
   */
  #put (key, row) {
    const rows = this.incoming ?? this.rows
    if (row === undefined) rows.delete(key)
    else rows.set(key, row)
    if (this.incoming === undefined) this.touched.add(key)
  }

  /** What changed since the last call: every row (`all`), or the keys put or deleted. */
  take () {
    const taken = { all: this.redraw, keys: this.touched }
    this.redraw = false
    this.touched = new Set()
    return taken
  }
}
