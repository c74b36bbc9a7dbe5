import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The built CLI: the tests run the program a user runs. */
export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url))

/** What a CLI run printed and how it ended. */
export interface CliRun {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  ms: number
}

/** Fails with a clear message when the CLI was not built. */
export function assertBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (pnpm turbo run build --filter=checkout...).`)
}

/** Variables of the developer's shell that would change what a test runs against. */
const UNSET = [
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'CHECKOUT_STORE',
  'CHECKOUT_DATA_DIR',
  'DATABASE_URL',
  'DYNAMODB_ENDPOINT',
  'S3_ENDPOINT',
  'AWS_ENDPOINT_URL',
]

/** Runs `node dist/cli.js ...args` in a child process and waits for it to exit. An empty value in `env` unsets the variable. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const started = performance.now()
  const childEnv: NodeJS.ProcessEnv = { ...process.env }
  for (const name of UNSET) delete childEnv[name]
  for (const [name, value] of Object.entries(env)) {
    if (value === '' || value === undefined) delete childEnv[name]
    else childEnv[name] = value
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, ms: performance.now() - started }))
  })
}

/** A fresh data folder for one test, and its removal. */
export function tempDataDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'checkout-test-'))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** True when the text holds a JavaScript stack frame. */
export const hasStackTrace = (text: string) => /^\s+at .+\(.+:\d+:\d+\)$/m.test(text) || /^\s+at .+:\d+:\d+$/m.test(text)
