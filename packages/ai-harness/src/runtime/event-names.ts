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
  /**
   * A tool call waits for approval (a tool with `needsApproval`): `value` has `sessionId`,
   * `toolCallId`, `approvalId` (TanStack AI's `approval_${toolCallId}`), `toolName` and the
   * call's `input`. Decide it with `host.approve({ sessionId, toolCallId, approved })`. The
   * stream also ends with TanStack AI's own interrupt (`RUN_FINISHED` with
   * `outcome.type === 'interrupt'`), so a TanStack AI client shows its approval prompt.
   */
  approval: 'harness.approval',
} as const
