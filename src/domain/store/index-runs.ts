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

/** One index being filled: every key in order (`at`: its place in the order), then `done`. */
export interface IndexRuns {
  add: (fields: readonly string[], at: number, revision: number) => void
}

/** A prefix index (its keys are a range of all keys): the last revision of each value. */
export class PrefixRuns implements IndexRuns {
  private readonly revisions = new Map<string, number>()
  private run: readonly string[] | undefined
  private revision = 0

  constructor (private readonly positions: readonly number[]) {}

  add (fields: readonly string[], _at: number, revision: number): void {
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

/** The slots of `order` in the runs `places` names (a start and an end each), `size` in all. */
function gather (order: Int32Array, places: readonly number[], size: number): Int32Array {
  const slots = new Int32Array(size)
  let n = 0
  for (let i = 0; i < places.length; i += 2) {
    for (let at = places[i] as number, end = places[i + 1] as number; at < end; at++) slots[n++] = order[at] as number
  }
  return slots
}

/** One value of a set index being filled: where its runs are in the order (a start and an end each), how many keys they hold, its last revision. */
interface Runs { places: number[], size: number, revision: number }

/**
 * A set index: the slots of each value, in key order, and its last revision. A value's keys are
 * noted as runs of the order, copied out at the end into a set of their exact size: a slot pushed
 * a key grew 3M-element arrays by copies, most of the build's garbage (bench/RESULTS.md).
 */
export class SetRuns implements IndexRuns {
  private readonly members = new Map<string, Runs>()
  private run: readonly string[] | undefined
  private set: Runs | undefined
  private start = 0
  private end = 0

  constructor (private readonly positions: readonly number[]) {}

  add (fields: readonly string[], at: number, revision: number): void {
    if (this.set === undefined || at !== this.end || !sameAt(fields, this.run as readonly string[], this.positions)) {
      this.close()
      const value = indexValue(fields, this.positions)
      this.set = this.members.get(value)
      if (this.set === undefined) this.members.set(value, (this.set = { places: [], size: 0, revision: 0 }))
      this.run = fields
      this.start = at
    }
    this.end = at + 1
    this.set.revision = Math.max(this.set.revision, revision)
  }

  /** The sets, from the slots in key order that `add` was given places in. */
  done (keys: KeysBySlot, order: Int32Array): Map<string, SortedSlots> {
    this.close()
    const byValue = new Map<string, SortedSlots>()
    for (const [value, { places, size, revision }] of this.members) {
      const held = new SortedSlots(keys, gather(order, places, size))
      held.revision = revision
      byValue.set(value, held)
    }
    return byValue
  }

  /** Notes the run being read in its value's runs. */
  private close (): void {
    if (this.set === undefined) return
    this.set.places.push(this.start, this.end)
    this.set.size += this.end - this.start
    this.set = undefined
  }
}
