// What a run killed outright leaves behind (its teardown never ran): the global setups that make a
// folder for the run remove, as they start, those of their kind older than any run.

import { readdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'

/** Older than any run. */
const LEFT_BEHIND_MS = 24 * 60 * 60 * 1000

/** Removes the entries of `parent` whose names start with `prefix` and that are older than a day. */
export async function removeLeftBehind (parent: string, prefix = ''): Promise<void> {
  for (const name of await readdir(parent)) {
    if (!name.startsWith(prefix)) continue
    const path = join(parent, name)
    const changed = await stat(path).then((s) => s.mtimeMs, () => undefined)
    if (changed !== undefined && Date.now() - changed > LEFT_BEHIND_MS) await rm(path, { recursive: true, force: true })
  }
}
