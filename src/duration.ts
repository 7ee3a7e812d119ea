// The one reader of a duration setting or parameter (REGISTRY_INTERVAL, `wait`): `ms`'s syntax
// (`500ms`, `5s`, `1h`), and a bare number as seconds, which `ms` alone would read as milliseconds.

import ms from 'ms'

/** `text` in milliseconds; undefined when it is no duration, or a negative one. */
export function readDuration (text: string): number | undefined {
  // `ms` throws on an empty text rather than calling it no duration.
  if (text === '') return undefined
  const parsed = /^\d+(\.\d+)?$/.test(text) ? Number(text) * 1000 : ms(text as ms.StringValue)
  return typeof parsed === 'number' && Number.isFinite(parsed) && parsed >= 0 ? parsed : undefined
}
