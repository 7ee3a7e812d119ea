// The bench's one table: each row's service figure, its floor, the ratio and whether the goal holds.

export interface Row {
  what: string
  unit: 'req/s' | 'ms' | 'µs' | 'MB' | 'KB' | 'B'
  /** `higher`: ratio at least; `lower`: ratio at most; `absolute`: the service's figure at most. */
  goal: { higher: number } | { lower: number } | { absolute: number }
  service?: number
  floor?: number
  /** The ratio is floor / service (a rate whose cost is compared). */
  inverse?: boolean
  /** Why the row could not be measured. */
  missing?: string
  /** The nats-server version the row ran on. */
  server?: string
}

function figure (n: number | undefined, unit: Row['unit']): string {
  if (n === undefined) return '–'
  if (unit === 'req/s') return `${Math.round(n).toLocaleString('en-US')} req/s`
  return `${n < 10 ? n.toFixed(2) : Math.round(n).toLocaleString('en-US')} ${unit}`
}

export function ratioOf (row: Row): number | undefined {
  if (row.service === undefined || row.floor === undefined) return undefined
  return row.inverse === true ? row.floor / row.service : row.service / row.floor
}

export function holds (row: Row): boolean | undefined {
  const ratio = ratioOf(row)
  if ('absolute' in row.goal) return row.service === undefined ? undefined : row.service <= row.goal.absolute
  if (ratio === undefined) return undefined
  return 'higher' in row.goal ? ratio >= row.goal.higher : ratio <= row.goal.lower
}

function goalText (row: Row): string {
  if ('absolute' in row.goal) return `≤ ${row.goal.absolute} ${row.unit}`
  return 'higher' in row.goal ? `≥ ${row.goal.higher}` : `≤ ${row.goal.lower}`
}

/** A markdown table, one line per row, every row printed whether measured or not. */
export function formatTable (rows: readonly Row[]): string {
  const lines = [
    '| what | nats-server | service | floor | ratio | goal | holds |',
    '|---|---|---:|---:|---:|---|---|'
  ]
  for (const row of rows) {
    const ratio = ratioOf(row)
    const held = holds(row)
    lines.push(`| ${row.what} | ${row.server ?? '–'} | ${row.missing === undefined ? figure(row.service, row.unit) : `not measured: ${row.missing}`} | ${figure(row.floor, row.unit)} | ${ratio === undefined ? '–' : ratio.toFixed(2)} | ${goalText(row)} | ${held === undefined ? '–' : held ? 'yes' : 'NO'} |`)
  }
  return lines.join('\n')
}
