import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { BenchResult } from '../src/report/result.js'

/** The built CLI, as `pnpm bench` runs it. */
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url))

/** A run of the built CLI with `args`, its JSON written to a temp folder: what it printed and wrote, and how to drop the folder. */
export async function runCli(
  args: readonly string[],
  timeoutMs: number,
): Promise<{ result: BenchResult; stdout: string; remove(): Promise<void> }> {
  if (!existsSync(CLI)) throw new Error('Build the bench first: pnpm turbo run build --filter=bench...')
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-test-'))
  const remove = () => rm(dir, { recursive: true, force: true })
  const out = path.join(dir, 'result.json')
  try {
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, [CLI, ...args, '--out', out], { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, so, se) =>
        error ? reject(new Error(`the run (${args.join(' ')}) failed: ${error.message}\n${se}`)) : resolve(so),
      )
    })
    return { result: JSON.parse(await readFile(out, 'utf8')) as BenchResult, stdout, remove }
  } catch (error) {
    await remove()
    throw error
  }
}
