// The one reader of the numbers and durations people write: query parameters (`limit`, `wait`) and
// settings (HTTP_PORT, REGISTRY_INTERVAL, ...). It reads a text whole or not at all: `0x10`, ` 5 `,
// `1e3` and `+5` are no numbers here, where JavaScript's Number() reads all four.

import ms from 'ms'

/** A decimal (digits, with or without a fraction: `.5` too) and a unit or none; no sign, exponent or space. */
const DURATION = /^(?:\d+(?:\.\d+)?|\.\d+)([a-z]*)$/i

/** `text` as a whole number written in decimal digits alone; undefined when it is anything else. */
export function readWhole (text: string): number | undefined {
  if (!/^\d+$/.test(text)) return undefined
  const value = Number(text)
  return Number.isSafeInteger(value) ? value : undefined
}

/**
 * `text` in milliseconds: a decimal and `ms`'s unit (`500ms`, `5s`, `1.5h`), or a bare decimal as
 * seconds (`30`, `.5`), which `ms` alone would read as milliseconds; undefined when it is no
 * duration.
 */
export function readDuration (text: string): number | undefined {
  const unit = DURATION.exec(text)?.[1]
  if (unit === undefined) return undefined
  const parsed = unit === '' ? Number(text) * 1000 : ms(text as ms.StringValue)
  return Number.isFinite(parsed) ? parsed : undefined
}
