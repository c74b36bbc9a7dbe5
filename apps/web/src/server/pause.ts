import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** Where a process holds at a named point: a pacing delay in the demo, a gate a test or the screenshot script opens. */
export type Pause = (name: string, demoMs: number) => Promise<void>

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * The pauses of a server process. Without a gates folder (`pnpm web`) each pause is a short
 * delay, so a person sees the answer stream and the payment take a moment. With one (the
 * browser test, `--screenshots`) there are no delays, and a pause holds only where the
 * driver armed a gate (`<name>.armed`): the first process to reach it writes its pid to
 * `<name>.reached` and waits for `<name>.open`; a process that reaches it later (the worker
 * that resumes a killed turn) goes on at once. Waits are bounded by the driver, not by time.
 */
export function pauses(gatesDir: string | undefined): Pause {
  if (!gatesDir) return (_name, demoMs) => (demoMs > 0 ? sleep(demoMs) : Promise.resolve())
  return async (name) => {
    const file = join(gatesDir, gateFile(name))
    if (!existsSync(`${file}.armed`)) return
    try {
      writeFileSync(`${file}.reached`, String(process.pid), { flag: 'wx' })
    } catch {
      return
    }
    while (!existsSync(`${file}.open`)) await sleep(10)
  }
}

/** A gate's file name: its name with anything but letters, digits, `-` and `.` as `_`. */
export const gateFile = (name: string) => name.replace(/[^A-Za-z0-9.-]/g, '_')
