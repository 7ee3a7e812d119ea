// A query string's %-escapes judged as a path's are: a broken one (`%ZZ`, `%4`, bytes that are not
// UTF-8) is refused naming its parameter, where the query parser would read it literally.

/** The name of the first parameter of `query` (the text after `?`) whose name or value holds a broken %-escape. */
export function brokenEscape (query: string): string | undefined {
  for (const pair of query.split('&')) {
    if (!pair.includes('%')) continue
    const at = pair.indexOf('=')
    const name = at === -1 ? pair : pair.slice(0, at)
    try {
      decodeURIComponent(pair.replace(/\+/g, ' '))
    } catch {
      try {
        return decodeURIComponent(name.replace(/\+/g, ' '))
      } catch {
        return name
      }
    }
  }
  return undefined
}
