import { ATTR, type Attributes, type HarnessSpan, startSpan } from './tracing.js'

/** What a worker's poll span says of the poll: wakeups claimed, and sessions resumed, busy, idle, failed. */
export function pollAttributes(
  claimed: number,
  result: { resumed: string[]; busy: string[]; idle: string[]; failed: string[] },
): Attributes {
  return {
    [ATTR.claimed]: claimed,
    'harness.worker.resumed': result.resumed.length,
    'harness.worker.busy': result.busy.length,
    'harness.worker.idle': result.idle.length,
    'harness.worker.failed': result.failed.length,
  }
}

/** Runs one poll of a worker in a span (its id, how many wakeups it claimed and what became of them). */
export async function tracePoll<T>(workerId: string, poll: (span: HarnessSpan) => Promise<T>): Promise<T> {
  const span = await startSpan('harness.worker.poll', { [ATTR.workerId]: workerId })
  try {
    return await span.run(() => poll(span))
  } catch (error) {
    span.fail(error)
    throw error
  } finally {
    span.end()
  }
}
