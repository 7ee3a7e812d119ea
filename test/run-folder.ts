// A folder of the run's own, for the global setups that make one (test/tmp-setup.ts,
// test/child-js-setup.ts); each removes it at the run's end. What a run killed outright left
// behind (its teardown never ran) is removed as the next one starts, once older than any run.

import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { join, sep } from 'node:path'

/** Older than any run. */
const LEFT_BEHIND_MS = 24 * 60 * 60 * 1000

/** A new folder in `parent` named `prefix` and a random tail, once the day-old ones of that prefix are gone. */
export async function runFolder (parent: string, prefix = ''): Promise<string> {
  await mkdir(parent, { recursive: true })
  for (const name of await readdir(parent)) {
    if (!name.startsWith(prefix)) continue
    const path = join(parent, name)
    const changed = await stat(path).then((s) => s.mtimeMs, () => undefined)
    if (changed !== undefined && Date.now() - changed > LEFT_BEHIND_MS) await rm(path, { recursive: true, force: true })
  }
  // mkdtemp appends the random tail to the path as written: with no prefix, to the folder's separator.
  return await mkdtemp(join(parent, prefix === '' ? sep : prefix))
}
