import { HarnessError, type HarnessErrorCode } from '../contract/errors.js'

/** A step was refused. Names the step, and for value errors the JSON path; never the value. */
export class StepError extends HarnessError {
  readonly step: string
  readonly path: string | undefined

  constructor(code: HarnessErrorCode, step: string, message: string, path?: string) {
    super(code, message)
    this.name = 'StepError'
    this.step = step
    this.path = path
  }
}

/**
 * A step failed for good: its last attempt threw or timed out, no attempts were left, or
 * the error was final (`NonRetryableError`, `isFinal`). The same error on the run where it
 * happened and on every later run (from the log), so a tool takes the same path after a
 * crash: it carries the last attempt's message (without the session's secrets), never the
 * thrown object. Code `STEP_FAILED`.
 */
export class StepFailedError extends StepError {
  /** How many attempts failed. */
  readonly attempts: number
  /** What the last attempt threw (its name and message), secrets replaced. */
  readonly lastError: string
  /** True when the last attempt timed out. */
  readonly timedOut: boolean

  constructor(step: string, attempts: number, lastError: string, timedOut: boolean) {
    super(
      'STEP_FAILED',
      step,
      `Step ${JSON.stringify(step)} failed after ${attempts === 1 ? '1 attempt' : `${attempts} attempts`}; the last ${timedOut ? 'timed out' : 'threw'}: ${lastError}`,
    )
    this.name = 'StepFailedError'
    this.attempts = attempts
    this.lastError = lastError
    this.timedOut = timedOut
  }
}

/** A run of a tool call passed the tool's `timeoutMs`: the call settles as a tool error. */
export function toolTimedOut(toolName: string, timeoutMs: number): HarnessError {
  return new HarnessError(
    'TOOL_TIMEOUT',
    `Tool ${JSON.stringify(toolName)} timed out after ${timeoutMs} ms and was stopped. A side effect it started may still have happened: check it (for example, look the order up) before you call the tool again.`,
  )
}

/** A record given to `append` was refused. Nothing of the batch was kept. */
export class RecordError extends HarnessError {
  readonly path: string | undefined

  constructor(code: HarnessErrorCode, message: string, path?: string) {
    super(code, message)
    this.name = 'RecordError'
    this.path = path
  }
}

export function notInDurableSession(what: string): HarnessError {
  return new HarnessError(
    'NOT_IN_DURABLE_SESSION',
    `${what} needs a durable session: there is no session log to hold it in plain chat(). Run the tool through a harness session (defineHarness + createHost), or leave ${what} out of tools that also run in plain chat().`,
  )
}

/**
 * A step call (`step.do`, `step.sleep`, `step.ask`, `append`) made after its tool call
 * ended: its `execute` had returned or thrown, for example a promise left running. It
 * runs nothing and writes nothing: the call is settled, and a record after its result
 * would belong to no call.
 */
export function toolCallSettled(what: string, toolCallId: string, toolName: string): HarnessError {
  return new HarnessError(
    'TOOL_CALL_SETTLED',
    `${what} was called after tool call ${JSON.stringify(toolCallId)} of ${JSON.stringify(toolName)} ended (its execute had returned or thrown); nothing ran and nothing was written. Await every step inside execute before it returns.`,
  )
}
