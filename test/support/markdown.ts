// Markdown as GitHub renders it, for the tests that hold links to headings: the anchors of a
// page's headings, and the relative links a page makes.

/** The anchor GitHub gives a heading's text: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
export function anchorOf (heading: string): string {
  return heading.trim().toLowerCase().replace(/`/g, '').replace(/[^\p{L}\p{N}\- _]/gu, '').replace(/ /g, '-')
}

/** The anchors of a page's headings; a repeated heading's later anchors take `-1`, `-2`... */
export function anchorsOf (markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const [, text] of withoutCode(markdown).matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const base = anchorOf(text as string)
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    anchors.add(n === 0 ? base : `${base}-${n}`)
  }
  return anchors
}

/** The targets of a page's links and images that are neither absolute URLs nor mail addresses. */
export function relativeLinks (markdown: string): string[] {
  return [...withoutCode(markdown).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?: "[^"]*")?\)/g)]
    .map((m) => m[1] as string)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
}

/** The page without its fenced code blocks and code spans, where `#` and `[..](..)` are not Markdown. */
function withoutCode (markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, (span) => span.replace(/[[\]()#]/g, ' '))
}
