// The repository explains itself: the README is a first screen for users (at most 15,000 bytes),
// every relative link of the README and docs/ leads to a file and heading that exist, and neither
// points outside the repository (a clone holds nothing beside it: no contract by section, no page of facts).

import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { anchorsOf, relativeLinks } from './support/markdown.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))]
const read = (page: string): string => readFileSync(join(root, page), 'utf8')
/** What points outside the repository: the folder beside it, the contract by section, the page of measured facts (written so that this file does not hold them). */
const OUTSIDE = /\.\.\/shared|SPEC(\.md)? ?§|FACTS\.md/

/** Where each link of `page` leads that does not resolve: a missing file, or a missing heading. */
function brokenLinks (page: string): string[] {
  const broken: string[] = []
  for (const link of relativeLinks(read(page))) {
    const [path, anchor] = link.split('#') as [string, string | undefined]
    const target = path === '' ? page : relative(root, join(root, dirname(page), decodeURIComponent(path)))
    if (target.startsWith('..') || !existsSync(join(root, target))) {
      broken.push(`${link}: no file ${target} in the repository`)
    } else if (anchor !== undefined && (statSync(join(root, target)).isDirectory() || !anchorsOf(read(target)).has(anchor))) {
      broken.push(`${link}: no heading #${anchor} in ${target}`)
    }
  }
  return broken
}

describe('the README and docs/', () => {
  test('hold the pages other files cite, the README among them', () => {
    expect(pages).toEqual(expect.arrayContaining(['README.md', ...[
      'README.md', 'buckets.md', 'registry.md', 'verb.md', 'http.md', 'running.md', 'least-privilege.md',
      'following-changes.md', 'access.md', 'glance.md', 'page.md', 'operations.md', 'architecture.md'
    ].map((f) => join('docs', f))]))
  })

  test('the README is a first screen: at most 15,000 bytes', () => {
    expect(Buffer.byteLength(read('README.md'))).toBeLessThanOrEqual(15_000)
  })

  test('the README and the docs index link every page of docs/', () => {
    const docs = pages.filter((p) => p.startsWith('docs/'))
    expect(relativeLinks(read('README.md'))).toEqual(expect.arrayContaining(docs))
    expect(relativeLinks(read('docs/README.md')).map((l) => join('docs', l))).toEqual(expect.arrayContaining(docs.filter((p) => p !== 'docs/README.md')))
  })

  test.each(pages)('every relative link of %s leads to a file, and to a heading where it names one', (page) => {
    expect(brokenLinks(page)).toEqual([])
  })

  test.each(pages)('%s points nowhere outside the repository', (page) => {
    const text = read(page)
    expect(text).not.toMatch(OUTSIDE)
  })
})

describe('the repository', () => {
  test('cites only itself: no file points outside the repository', () => {
    // Code comments cite docs/ (a clone has nothing beside the repository).
    const grep = spawnSync('git', ['grep', '-nE', OUTSIDE.source, '--', '.', ':!package-lock.json'], { cwd: root, encoding: 'utf8' })
    expect(grep.status, grep.stderr).not.toBe(2)
    expect(grep.stdout.split('\n').filter((l) => l !== '')).toEqual([])
  })
})
