/**
 * Why a tool call stops on purpose: a long sleep, a question or an approval for a person,
 * a child session that waits. The harness ends the run without settling the call, logs why
 * the turn waits, and a worker (or an answer) resumes it later. Not an error, and never
 * thrown into a tool: the step that parks stays pending while the harness ends the call
 * (see `LiveToolCall.raceStop`).
 */
export class ParkSignal extends Error {
  constructor(
    readonly toolCallId: string,
    readonly reason: 'sleep' | 'ask' | 'agent' | 'approval',
    /** For a sleep: when to wake. */
    readonly until: number | null,
    /** What the stream tells the client, e.g. the question. */
    readonly event: Record<string, unknown>,
  ) {
    super(`Tool call ${toolCallId} waits (${reason}); the harness resumes it later.`)
    this.name = 'ParkSignal'
  }
}

export const isParkSignal = (error: unknown): error is ParkSignal => error instanceof ParkSignal
