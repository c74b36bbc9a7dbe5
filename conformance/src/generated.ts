/**
 * How the cases with generated inputs (fast-check) run: a fixed seed by default, so every
 * run of the suite (CI included) tries the same inputs and a failure repeats; set
 * `HARNESS_CONFORMANCE_SEED` to try other inputs and `HARNESS_CONFORMANCE_RUNS` to try more
 * of them (`HARNESS_CONFORMANCE_RUNS=500 HARNESS_CONFORMANCE_SEED=$RANDOM npx vitest run …`).
 * A failure names the seed and the inputs, so it can be run again.
 */
import fc from 'fast-check'

/** The seed of the generated cases: 34 unless `HARNESS_CONFORMANCE_SEED` says otherwise. */
export function generatedSeed(): number {
  const given = Number(process.env.HARNESS_CONFORMANCE_SEED)
  return Number.isSafeInteger(given) ? given : 34
}

/** Runs of a generated case: `base` times `HARNESS_CONFORMANCE_RUNS / 10` (the default, 10, runs `base`). */
export function generatedRuns(base: number): number {
  const given = Number(process.env.HARNESS_CONFORMANCE_RUNS)
  return Number.isSafeInteger(given) && given > 0 ? Math.max(1, Math.round((base * given) / 10)) : base
}

/**
 * Checks `property` on `runs` generated inputs with the fixed seed. The first failing input
 * ends the run (no shrinking: the cases keep state in the store between runs), and the
 * error says the seed, the input and the store's failure.
 */
export async function checkGenerated<T>(arbitrary: fc.Arbitrary<T>, runs: number, property: (input: T) => Promise<void>): Promise<void> {
  const seed = generatedSeed()
  const result = await fc.check(fc.asyncProperty(arbitrary, property), { seed, numRuns: generatedRuns(runs), endOnFailure: true })
  if (!result.failed) return
  const shown = fc.stringify(result.counterexample?.[0])
  const error = result.errorInstance as Error | undefined
  throw new Error(
    `${error?.message ?? String(result.errorInstance)}\n(generated input of run ${result.numRuns} with HARNESS_CONFORMANCE_SEED=${seed}: ${shown.length > 600 ? `${shown.slice(0, 600)}…` : shown})`,
    { cause: error },
  )
}

/** Log ids that break stores that build keys, paths, URLs or plain objects from them. */
export const TRICKY_IDS = [
  's',
  'S',
  'team-7',
  'team-7/alice',
  'team-7/',
  'team-70',
  'a.b',
  '.',
  '..',
  'a?b=1',
  'a#frag',
  'a%2Fb',
  'a/b',
  '%',
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '2s',
  'x_s',
  'x/s',
  'x:s',
] as const

/** An id from {@link TRICKY_IDS}, or a short one made of the characters that separate keys and paths. */
export const trickyId: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY_IDS) },
  {
    weight: 1,
    arbitrary: fc.string({ minLength: 1, maxLength: 8, unit: fc.constantFrom('/', '.', '?', '#', '%', '_', ':', '-', 'a', 'A', '7', ' ') }),
  },
)
