import type { HarnessRecord } from './records.js'

/**
 * Every type of `HarnessRecord`, once. A type added to the union fails to compile until it
 * is listed here; the fold reads these types (session-fold.ts), and the secret check
 * counts them as structure every log holds (`FIXED_STRUCTURE`).
 */
const TYPES: { readonly [T in HarnessRecord['type']]: true } = {
  'harness.session.opened': true,
  'harness.turn.started': true,
  'harness.turn.resumed': true,
  'harness.turn.finished': true,
  'harness.turn.cancelled': true,
  'harness.assistant': true,
  'harness.secret.used': true,
  'harness.step': true,
  'harness.step.failed': true,
  'harness.step.started': true,
  'harness.step.intent': true,
  'harness.rollback': true,
  'harness.sleep': true,
  'harness.ask': true,
  'harness.answer': true,
  'harness.answer.rejected': true,
  'harness.approval.requested': true,
  'harness.approval.decided': true,
  'harness.parked': true,
  'harness.tool.result': true,
}

/** The types of the records the harness writes to a session log. */
export const HARNESS_RECORD_TYPES: readonly HarnessRecord['type'][] = Object.keys(TYPES) as HarnessRecord['type'][]
