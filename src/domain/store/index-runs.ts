// The indexes of one generation filled in one pass over its keys in order (Contents.buildIndexes).
// Keys in order come in runs of one value (one node's keys, one module's): each index compares a
// key's fields with its run's and starts a value only where the run ends. A key's fields are let go
// once every index has read them: kept for the whole build, 3M keys held 3M arrays of 12M strings,
// most of what the collector did at the load's end.

import { SortedSlots, type KeysBySlot } from './sorted-keys.js'

/** The separator of an index value over several fields: no token holds it. */
export const SEP = '\u0000'

/** An entry's value in one index: the field itself, or the fields joined (no array per entry for one). */
export function indexValue (fields: readonly string[], positions: readonly number[]): string {
  if (positions.length === 1) return fields[positions[0] as number] as string
  if (positions.length === 2) return `${fields[positions[0] as number] as string}${SEP}${fields[positions[1] as number] as string}`
  return positions.map((p) => fields[p]).join(SEP)
}

/** Whether two keys' fields hold the same values at `positions`: what their index values would say, without joining them. */
function sameAt (a: readonly string[], b: readonly string[], positions: readonly number[]): boolean {
  for (const p of positions) if (a[p] !== b[p]) return false
  return true
}

/** One index being filled: every key in order, then `done`. */
export interface IndexRuns {
  add: (fields: readonly string[], slot: number, revision: number) => void
}

/** A prefix index (its keys are a range of all keys): the last revision of each value. */
export class PrefixRuns implements IndexRuns {
  private readonly revisions = new Map<string, number>()
  private run: readonly string[] | undefined
  private revision = 0

  constructor (private readonly positions: readonly number[]) {}

  add (fields: readonly string[], _slot: number, revision: number): void {
    if (this.run === undefined || !sameAt(fields, this.run, this.positions)) {
      this.done()
      this.run = fields
      this.revision = 0
    }
    this.revision = Math.max(this.revision, revision)
  }

  /** Ends the run being read (called by `add` at a run's end, and once after the last key). */
  done (): Map<string, number> {
    if (this.run !== undefined) this.revisions.set(indexValue(this.run, this.positions), this.revision)
    this.run = undefined
    return this.revisions
  }
}

/** A set index: the slots of each value, in key order, and its last revision. */
export class SetRuns implements IndexRuns {
  private readonly members = new Map<string, { slots: number[], revision: number }>()
  private run: readonly string[] | undefined
  private set: { slots: number[], revision: number } | undefined

  constructor (private readonly positions: readonly number[]) {}

  add (fields: readonly string[], slot: number, revision: number): void {
    if (this.set === undefined || !sameAt(fields, this.run as readonly string[], this.positions)) {
      const value = indexValue(fields, this.positions)
      this.set = this.members.get(value)
      if (!this.set) this.members.set(value, (this.set = { slots: [], revision: 0 }))
      this.run = fields
    }
    this.set.slots.push(slot)
    this.set.revision = Math.max(this.set.revision, revision)
  }

  done (keys: KeysBySlot): Map<string, SortedSlots> {
    const byValue = new Map<string, SortedSlots>()
    for (const [value, { slots, revision }] of this.members) {
      const held = new SortedSlots(keys, Int32Array.from(slots))
      held.revision = revision
      byValue.set(value, held)
    }
    return byValue
  }
}
