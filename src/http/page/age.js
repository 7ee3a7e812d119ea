// How long ago, as a person reads it at a glance: "40 s", "12 min", "3 h", "5 d".

const UNITS = [
  { ms: 24 * 60 * 60 * 1000, unit: 'd' },
  { ms: 60 * 60 * 1000, unit: 'h' },
  { ms: 60 * 1000, unit: 'min' },
  { ms: 1000, unit: 's' }
]

/**
 * The age of `since` (an ISO time) at `now` (ms since the epoch), in its largest whole unit; a time
 * ahead of `now` (a clock a little ahead of the browser's) is "0 s".
 * @param {string} since
 * @param {number} now
 * @returns {string}
 */
export function age (since, now) {
  const elapsed = Math.max(0, now - Date.parse(since))
  for (const { ms, unit } of UNITS) {
    if (elapsed >= ms) return `${Math.floor(elapsed / ms)} ${unit}`
  }
  return '0 s'
}
