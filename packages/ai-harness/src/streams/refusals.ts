import { type HarnessErrorCode, isHarnessError } from '../contract/errors.js'

/**
 * A refusal of the store by its code. A store reached through a proxy (another process,
 * a worker) may hand the code back on a plain error; a lock must still wait, a writer
 * must still retry.
 */
export const refused = (error: unknown, code: HarnessErrorCode): boolean =>
  isHarnessError(error, code) || (error instanceof Error && (error as { code?: unknown }).code === code)
