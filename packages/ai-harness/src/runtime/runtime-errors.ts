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
