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
