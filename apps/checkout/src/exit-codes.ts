/**
 * What the process exit code says. Scripts can rely on these; the README lists them.
 */
export const ExitCode = {
  /** The run finished with exactly one charge and one invoice per order (or `log` printed the session). */
  Ok: 0,
  /** The run did not end as expected: a process failed, or the ledger shows a duplicate or missing charge or invoice. */
  Failed: 1,
  /** Bad usage: an unknown flag, a bad value, or a store without the settings it needs. */
  Usage: 2,
  /** The store could not be reached or opened. */
  StoreUnreachable: 3,
  /** `log`: the store has no session with that id. */
  NotFound: 4,
} as const

/** One of the documented exit codes. */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

/** An error the CLI reports as one clear line, with its exit code, and no stack trace. */
export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'CliError'
  }
}

/** Bad flags or settings. */
export const usageError = (message: string) => new CliError(ExitCode.Usage, message)

/** The message of any thrown value, for one-line reports. */
export function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return messageOf(error.errors[0])
  if (error instanceof Error) return error.message || error.name
  return String(error)
}
