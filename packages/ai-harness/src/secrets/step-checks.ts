import { StepError } from '../runtime/runtime-errors.js'
import { redactQuestionSchema } from './question-schema.js'
import { SECRET_MARKER, type SecretScanner } from './secret-scanner.js'
import { scrubError } from './error-scrub.js'

/**
 * A step, sleep or question name that holds a secret is refused before anything runs or
 * is written: names are logged as they are and are part of idempotency keys, so they are
 * never cut. The error does not repeat the name.
 */
export function refuseSecretName(scanner: SecretScanner, name: unknown, what: 'step' | 'sleep' | 'question'): void {
  if (typeof name !== 'string') return
  const encoding = scanner.scanText(name)
  if (encoding === null) return
  throw new StepError(
    'STEP_SECRET',
    SECRET_MARKER,
    `A ${what} name holds a secret of the session (${encoding}). Names are logged and are part of idempotency keys: build them from ids (an order id), never from a token.`,
  )
}

/**
 * The JSON Schema of a question as the log keeps it: descriptions are text for people and
 * lose their secrets; a secret in what an answer is checked against is refused.
 */
export function loggedQuestionSchema(scanner: SecretScanner, name: string, jsonSchema: unknown): unknown {
  const checked = redactQuestionSchema(scanner, jsonSchema)
  if ('schema' in checked) return checked.schema
  throw new StepError(
    'STEP_SECRET',
    name,
    `The schema of question ${JSON.stringify(name)} holds a secret of the session at ${checked.refusedAt}, a part that decides which answers are valid (a property name, an enum, a const, a pattern…), so it cannot be cut out. Ask without the secret.`,
    checked.refusedAt,
  )
}

/** Refuses a step value that holds a secret of the session (`STEP_SECRET`): the tool must not get it, nor the log keep it. */
export function refuseStepSecret(scanner: SecretScanner, name: string, value: unknown): void {
  const secret = scanner.find(value)
  if (secret) {
    throw new StepError(
      'STEP_SECRET',
      name,
      `Step ${JSON.stringify(name)} returned a secret of the session at ${secret.path} (${secret.encoding}). The log must not keep it: read the secret outside step.do and return an id, not a token.`,
      secret.path,
    )
  }
}

/** Runs `check`; an error it throws leaves without the session's secrets. */
export function scrubbed(scanner: SecretScanner, check: () => void): void {
  try {
    check()
  } catch (error) {
    throw scrubError(scanner, error)
  }
}
