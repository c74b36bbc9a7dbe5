/**
 * Requests a client sent to its backing service, by kind. Counted where the client
 * sends them (a wrapped pg query, an AWS SDK middleware), so "round trips per step"
 * is a count, not a reading of the store's code.
 */
export interface RequestCount {
  reads: number
  writes: number
  /** BEGIN/COMMIT and anything else that is neither. */
  other: number
}

export class RequestCounter {
  readonly #count: RequestCount = { reads: 0, writes: 0, other: 0 }
  /** Every request by name (SQL verb or SDK command), for the JSON report. */
  readonly byName = new Map<string, number>()

  add(kind: keyof RequestCount, name: string): void {
    this.#count[kind]++
    this.byName.set(name, (this.byName.get(name) ?? 0) + 1)
  }

  snapshot(): RequestCount {
    return { ...this.#count }
  }

  /** Requests since `before`. */
  since(before: RequestCount): RequestCount & { total: number } {
    const reads = this.#count.reads - before.reads
    const writes = this.#count.writes - before.writes
    const other = this.#count.other - before.other
    return { reads, writes, other, total: reads + writes + other }
  }
}

/** Classifies a SQL statement by its first verb; a CTE counts as a write when it changes rows. */
export function sqlKind(text: string): { kind: keyof RequestCount; name: string } {
  const verb = /^\s*([a-z]+)/i.exec(text)?.[1]?.toUpperCase() ?? '?'
  if (verb === 'SELECT' || verb === 'SHOW') return { kind: 'reads', name: verb }
  if (verb === 'WITH')
    return /\b(INSERT|UPDATE|DELETE)\b/i.test(text) ? { kind: 'writes', name: 'WITH…WRITE' } : { kind: 'reads', name: 'WITH…SELECT' }
  if (verb === 'INSERT' || verb === 'UPDATE' || verb === 'DELETE') return { kind: 'writes', name: verb }
  return { kind: 'other', name: verb }
}

const AWS_READS = new Set(['GetItem', 'Query', 'Scan', 'GetObject', 'HeadObject', 'ListObjectsV2', 'HeadBucket', 'DescribeTable'])

/** Classifies an AWS SDK command by name. */
export function awsKind(commandName: string): keyof RequestCount {
  const name = commandName.replace(/Command$/, '')
  return AWS_READS.has(name) ? 'reads' : 'writes'
}
