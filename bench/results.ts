// bench/RESULTS.md: the last three full runs side by side, a row holding when it holds in two of
// them (one green run of several proves little on a shared machine), then the newest run's table
// whole. The runs themselves are kept in bench/runs.json; the hand-written findings below the
// tables outlive every rewrite.

import { readFile, writeFile } from 'node:fs/promises'
import { formatTable, holds, ratioOf, type Row } from './table.js'

/** One full run, as kept; `handed`: the version of the server NATS_URL handed it for the large mesh. */
export interface Run { date: string, machine: string, handed?: string, rows: Row[] }

/** A run's column: its date, and the server it was handed when it was. */
const columnOf = (run: Run): string => run.handed === undefined ? run.date : `${run.date} (NATS_URL: ${run.handed})`

const KEPT = 3
/** A row holds when it holds in at least this many of the kept runs. */
const HOLDS_IN = 2

/** A run's figure for a row: its ratio, or its own figure where the goal is absolute. */
function figureOf (row: Row | undefined): string {
  if (row === undefined) return '–'
  if (row.missing !== undefined) return 'not measured'
  const ratio = ratioOf(row)
  const text = ratio !== undefined ? ratio.toFixed(2) : row.service === undefined ? '–' : `${row.service < 10 ? row.service.toFixed(2) : Math.round(row.service)} ${row.unit}`
  return holds(row) === false ? `**${text}**` : text
}

function goalOf (row: Row): string {
  if ('absolute' in row.goal) return `≤ ${row.goal.absolute} ${row.unit}`
  return 'higher' in row.goal ? `≥ ${row.goal.higher}` : `≤ ${row.goal.lower}`
}

/** The kept runs side by side: a line per row of the newest run. */
export function sideBySide (runs: readonly Run[]): string {
  const newest = runs.at(-1) as Run
  const lines = [
    `| row | ${runs.map(columnOf).join(' | ')} | goal | holds in ${Math.min(HOLDS_IN, runs.length)} of ${runs.length} |`,
    `|---|${runs.map(() => '---:').join('|')}|---|---|`
  ]
  for (const row of newest.rows) {
    const each = runs.map((run) => run.rows.find((r) => r.what === row.what))
    const held = each.filter((r) => r !== undefined && holds(r) === true).length
    lines.push(`| ${row.what} | ${each.map(figureOf).join(' | ')} | ${goalOf(row)} | ${held >= Math.min(HOLDS_IN, runs.length) ? 'yes' : 'NO'} |`)
  }
  return lines.join('\n')
}

/** Adds `run` to the kept runs in `runsFile` and writes the page `resultsFile` anew above its findings. */
export async function keepRun (run: Run, runsFile: string, resultsFile: string, header: string[]): Promise<void> {
  const kept = await readFile(runsFile, 'utf8').then((t) => JSON.parse(t) as Run[], () => [])
  const runs = [...kept, run].slice(-KEPT)
  await writeFile(runsFile, `${JSON.stringify(runs, null, 1)}\n`)
  const before = await readFile(resultsFile, 'utf8').catch(() => '')
  const findings = before.includes('\n## Findings') ? before.slice(before.indexOf('\n## Findings') + 1) : ''
  const page = [
    ...header,
    '',
    `## The last full runs (${runs.length} of the ${KEPT} kept)`,
    '',
    `Ratios (or the figure, where the goal is one); a figure that misses its goal is in bold. A row holds when it holds in ${HOLDS_IN} of the ${KEPT} runs.`,
    '',
    sideBySide(runs),
    '',
    `## The newest run (${run.date}, ${run.machine})`,
    '',
    formatTable(run.rows),
    ''
  ].join('\n')
  await writeFile(resultsFile, `${page}${findings === '' ? '' : `\n${findings}`}`)
}
