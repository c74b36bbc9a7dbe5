import { type HarnessStore, type LogEntry, readAll } from '@tanstack/ai-harness/store'

/**
 * A critical section that proves the lock around it excluded every other holder, in any
 * process: it appends `enter` at the witness log's tail, holds for `holdMs`, then appends
 * `exit` right after its own `enter`. Another section that entered meanwhile took that seq,
 * so this exit (or the other's enter) is refused with `LOG_CONFLICT`, and the section throws.
 * No clock is compared across processes: the store's own seq is the witness.
 */
export async function witnessedSection(store: HarnessStore, witness: string, who: string, holdMs: number): Promise<void> {
  // A store may answer in short pages: the whole log, to know its tail.
  const tail = (await readAll(store, witness)).at(-1)?.seq ?? 0
  await appendOrOverlap(store, witness, tail + 1, 'lock.enter', who)
  await new Promise((resolve) => setTimeout(resolve, holdMs))
  await appendOrOverlap(store, witness, tail + 2, 'lock.exit', who)
}

async function appendOrOverlap(store: HarnessStore, witness: string, seq: number, type: string, who: string): Promise<void> {
  try {
    await store.append(witness, seq, [{ type, who }])
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'LOG_CONFLICT') throw error
    throw new Error(
      `${who}: another critical section of the same key wrote to the witness log while ${who} held the lock (${type} at seq ${seq})`,
    )
  }
}

/** The problems of a witness log: each section's enter followed at once by its own exit, `sections` of them. */
export function witnessProblems(entries: readonly LogEntry[], sections: number): string[] {
  const problems: string[] = []
  if (entries.length !== sections * 2) problems.push(`the witness log has ${entries.length} entries for ${sections} sections (2 each)`)
  for (let i = 0; i + 1 < entries.length; i += 2) {
    const [enter, exit] = [entries[i]!.record, entries[i + 1]!.record]
    if (enter.type !== 'lock.enter' || exit.type !== 'lock.exit' || enter.who !== exit.who) {
      problems.push(
        `entries ${i + 1}-${i + 2} are ${enter.type} of ${String(enter.who)}, ${exit.type} of ${String(exit.who)}: sections overlapped`,
      )
    }
  }
  return problems
}
