// An object without its undefined fields. With exactOptionalPropertyTypes an optional field is
// either there with a value or absent; this says so once, where a spread of
// `...(x === undefined ? {} : { x })` said it field by field.

type Required<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] }
type Optional<T> = { [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined> }

/** `fields` with every undefined field left out: `defined({ a: 1, b: undefined })` is `{ a: 1 }`. */
export function defined<T extends object> (fields: T): Required<T> & Optional<T> {
  const out: Record<string, unknown> = {}
  for (const key in fields) {
    const value = fields[key]
    if (value !== undefined) out[key] = value
  }
  return out as Required<T> & Optional<T>
}
