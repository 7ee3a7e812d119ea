// Compiles a domain table into the registry's answers, one per kind, as canonical bytes: the
// writer compares bytes, so two instances with one table agree on what "differs" means.

import { Compile } from '../../vendor/typebox.js'
import { DomainTable, type Domain } from './registry-table.js'
import { type RegistryValue } from '../wire/schemas.js'
/** A domain table that will not do, naming the domain and what to change: the start reads it as REGISTRY_DOMAINS_FILE's refusal. */
export class DomainTableError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'DomainTableError'
  }
}

const tableError = (message: string): DomainTableError => new DomainTableError(message)

/** JSON with keys sorted and no insignificant white space. */
export function canonicalJson (value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

export interface CompiledKind {
  value: RegistryValue
  /** The canonical JSON as UTF-8: what is stored under the kind. */
  bytes: Uint8Array
}

function describe (domain: Domain, index: number): string {
  return `domain #${index + 1} (module ${domain.module}, kinds ${domain.kinds.join(',')})`
}

function answerOf (domain: Domain, kind: string): RegistryValue {
  const value: RegistryValue = { kind, module: domain.module }
  if (domain.bucket !== undefined) value.bucket = domain.bucket
  if (domain.key !== undefined) value.key = domain.key
  if (domain.collection !== undefined) value.collection = domain.collection.replaceAll('<kind>', kind)
  if (domain.verb !== undefined) value.verb = domain.verb
  if (domain.note !== undefined) value.note = domain.note
  return value
}

function checkWhere (domain: Domain, index: number): void {
  const where = describe(domain, index)
  if ((domain.bucket === undefined) === (domain.verb === undefined)) {
    throw tableError(`${where} must name either a bucket (with its key shape) or a verb, not ${domain.verb === undefined ? 'neither' : 'both'}`)
  }
  if (domain.bucket !== undefined && domain.key === undefined) {
    throw tableError(`${where} names bucket ${domain.bucket} without its key shape; add "key"`)
  }
  if (domain.verb !== undefined && (domain.key !== undefined || domain.collection !== undefined)) {
    throw tableError(`${where} is answered by verb ${domain.verb}, so "key" and "collection" do not apply; remove them`)
  }
  // docs/registry.md: a bucket is read by many; a secret is handed out by its owner's verb, one asker at a time.
  if (domain.bucket !== undefined && domain.kinds.includes('secret')) {
    throw tableError(`${where} puts kind "secret" in bucket ${domain.bucket}, but a secret is never in a bucket; answer it by a verb, like mesh-vault.secret`)
  }
}

/** Compiles a table; refuses two domains answering one kind, naming both. */
export function compileRegistry (table: DomainTable): Map<string, CompiledKind> {
  const owner = new Map<string, number>()
  const compiled = new Map<string, CompiledKind>()
  table.forEach((domain, index) => {
    checkWhere(domain, index)
    for (const kind of domain.kinds) {
      const earlier = owner.get(kind)
      if (earlier !== undefined) {
        throw tableError(`kind "${kind}" is answered by two domains, ${describe(table[earlier] as Domain, earlier)} and ${describe(domain, index)}; keep it in one`)
      }
      owner.set(kind, index)
      const value = answerOf(domain, kind)
      compiled.set(kind, { value, bytes: new TextEncoder().encode(canonicalJson(value)) })
    }
  })
  return compiled
}

const checkTable = Compile(DomainTable)

/** Reads a domain table from JSON text (REGISTRY_DOMAINS_FILE), saying where it does not fit. */
export function parseDomainTable (text: string, source: string): DomainTable {
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (err) {
    throw tableError(`${source} is not JSON (${(err as Error).message}); it takes an array of domains like [{"kinds":["secret"],"module":"mesh-vault","verb":"mesh-vault.secret"}]`)
  }
  if (!checkTable.Check(data)) {
    const [, errors] = checkTable.Errors(data)
    const first = errors[0]
    throw tableError(`${source} at ${first?.instancePath || '/'}: ${first?.message ?? 'does not fit'}; each domain takes kinds (tokens), module, and bucket+key[+collection] or verb, optional note`)
  }
  compileRegistry(data)
  return data
}
