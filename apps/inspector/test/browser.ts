import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

/** Chromium from Debian's packages (`apt-get install -y chromium`); `.ci/run` installs it when missing. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const isCi = ['true', '1', 'yes'].includes(String(process.env.CI ?? '').toLowerCase())

/**
 * Whether Chromium is here. Without it a browser test is skipped on a developer's machine
 * (with the reason), and is a failure with CI set: call this once per test file.
 */
export function chromiumOrFail(suite: string): boolean {
  const has = existsSync(CHROMIUM)
  if (!has && isCi) {
    describe(suite, () => {
      it('needs Chromium', () => {
        throw new Error(
          `Chromium is not at ${CHROMIUM}; .ci/run installs it (apt-get install -y chromium). With CI set its absence is a failure.`,
        )
      })
    })
  }
  return has
}

/** Waits for the page as a person would, with room for a busy CI machine (vitest's default is 1 s). */
export const poll = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 20_000, interval: 100 })
