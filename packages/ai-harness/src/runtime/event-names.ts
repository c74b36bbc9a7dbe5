/** The custom event names the harness adds to a session's stream. */
export const HARNESS_EVENTS = {
  /** The turn waits: `value` says why (`reason`), and until when for a sleep. */
  parked: 'harness.parked',
  /**
   * A person is asked: `value` has `sessionId`, `questionId`, `message` and the answer's JSON
   * `schema`; when the question is asked again because the tool's own schema refused the
   * last answer, `rejected` says why.
   */
  question: 'harness.question',
} as const
