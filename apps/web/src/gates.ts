import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gateFile } from './server/pause.js'

/** The driver's side of the server processes' gates (server/pause.ts): the browser test and `--screenshots`. */
export class Gates {
  constructor(readonly dir: string) {}

  /** The next process to reach `name` holds there until {@link open}. */
  arm(name: string): void {
    writeFileSync(this.#file(name, 'armed'), '')
  }

  /** Resolves with the pid of the process that holds at `name`, once one does. */
  async reached(name: string, timeoutMs = 20_000): Promise<number> {
    const file = this.#file(name, 'reached')
    const until = Date.now() + timeoutMs
    while (!existsSync(file)) {
      if (Date.now() > until) throw new Error(`No server process reached the gate ${name} within ${timeoutMs} ms.`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    for (;;) {
      const pid = Number(readFileSync(file, 'utf8'))
      if (pid > 0) return pid
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  }

  /** Lets the process held at `name` go on. */
  open(name: string): void {
    writeFileSync(this.#file(name, 'open'), '')
  }

  #file(name: string, state: string): string {
    return join(this.dir, `${gateFile(name)}.${state}`)
  }
}
