import assert from 'node:assert/strict'

/** Resolves once `holds()` does, asking every 10 ms of real time; fails with `failure` after `withinMs`. */
export async function untilHolds(holds: () => boolean | Promise<boolean>, withinMs: number, failure: string): Promise<void> {
  const deadline = Date.now() + withinMs
  for (;;) {
    if (await holds()) return
    if (Date.now() > deadline) assert.fail(failure)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
