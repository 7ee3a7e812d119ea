// The modules of src/ import one another without a cycle: a cycle means a module that can be read
// only with another that needs it, and a type two modules share belongs in a leaf module of its own
// (as src/domain/answers/answer.ts holds the answer both the buckets' requests and the overviews use).
// And they keep the layers of docs/architecture.md: the faces (src/http, src/bus) are imported by
// the composition root (src/service.ts) alone, so that the settings (src/config.ts, src/settings/)
// and the domain can be read, and tested, without them. Every import counts, types too;
// TypeScript's own pre-parser reads them.

import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import ts from 'typescript'
import { describe, expect, test } from 'vitest'

const SRC = resolve(import.meta.dirname, '../src')

/** The modules of `dir` (tests aside) and, for each, the modules of src/ it imports. */
function importGraph (dir: string): Map<string, string[]> {
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts')).map((f) => join(dir, f))
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
    graph.set(file, importedFiles.map((i) => i.fileName).filter((name) => name.startsWith('.')).map((name) => resolve(dirname(file), name.replace(/\.js$/, '.ts'))))
  }
  return graph
}

/** Each cycle of the graph once, as the modules around it (the first found from each start). */
function cycles (graph: Map<string, string[]>): string[][] {
  const found: string[][] = []
  const done = new Set<string>()
  const path: string[] = []
  const visit = (file: string): void => {
    const at = path.indexOf(file)
    if (at >= 0) {
      found.push([...path.slice(at), file])
      return
    }
    if (done.has(file)) return
    path.push(file)
    for (const next of graph.get(file) ?? []) visit(next)
    path.pop()
    done.add(file)
  }
  for (const file of graph.keys()) visit(file)
  return found
}

/** Every module `from` reaches through its imports, itself aside. */
function reached (graph: Map<string, string[]>, from: string): Set<string> {
  const seen = new Set<string>()
  const visit = (file: string): void => {
    for (const next of graph.get(file) ?? []) {
      if (seen.has(next)) continue
      seen.add(next)
      visit(next)
    }
  }
  visit(from)
  return seen
}

/** Whether `file` is a module of the faces: the gateway or the bus. */
const isFace = (file: string): boolean => ['http', 'bus'].some((dir) => file.startsWith(join(SRC, dir) + sep))

describe('the imports of src/', () => {
  test('make no cycle', () => {
    const graph = importGraph(SRC)
    expect(graph.size).toBeGreaterThan(50)
    expect(cycles(graph).map((c) => c.map((f) => relative(SRC, f)).join(' → '))).toEqual([])
  })

  test('are read whole: a cycle through a re-export or a type is found', () => {
    const a = '/m/a.ts'
    const b = '/m/b.ts'
    expect(cycles(new Map([[a, [b]], [b, [a]]]))).toEqual([[a, b, a]])
    expect(cycles(new Map([[a, [b]], [b, []]]))).toEqual([])
    const { importedFiles } = ts.preProcessFile("import type { T } from './t.js'\nexport { U } from './u.js'\nconst m = await import('./v.js')\n", true, true)
    expect(importedFiles.map((i) => i.fileName)).toEqual(['./t.js', './u.js', './v.js'])
  })

  test('reach the faces only from the composition root: no other module outside them imports src/http or src/bus', () => {
    const graph = importGraph(SRC)
    const root = join(SRC, 'service.ts')
    const importers = [...graph].filter(([file]) => !isFace(file) && file !== root)
      .flatMap(([file, imports]) => imports.filter(isFace).map((face) => `${relative(SRC, file)} → ${relative(SRC, face)}`))
    expect(importers).toEqual([])
  })

  test('leave the settings without the faces: src/config.ts reaches nothing in src/http or src/bus, through any module', () => {
    const graph = importGraph(SRC)
    const config = join(SRC, 'config.ts')
    expect(graph.has(config)).toBe(true)
    expect([...reached(graph, config)].filter(isFace).map((f) => relative(SRC, f))).toEqual([])
  })
})
