import { existsSync, readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { codeBlocks, typecheck as typecheckFiles, writeModule } from '@tanstack/ai-harness-doc-blocks'

export { codeBlocks }

/** The repo root: this file is packages/ai-harness/test/support/seed.ts. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..')

/** The public docs page, in the shared/ folder that CI clones beside the repo. */
export const seedPagePath = resolve(repoRoot, '..', 'shared', 'seed', 'durable-tools.md')

export const SEED_GROUP = 'harness-durable-tools'

/** True when `CI` is set to anything but '', 'false' or '0'. */
export const isCi = (env: NodeJS.ProcessEnv = process.env): boolean => !['', 'false', '0'].includes((env.CI ?? '').trim().toLowerCase())

/**
 * Whether the seed page tests run: `run` when the page is there; `skip` (with the reason
 * to report) when it is not, on a clone of the repo alone; `fail` when it is not and
 * `CI` is set, because CI always lays shared/ beside the repo.
 */
export function seedPageStatus(
  path: string = seedPagePath,
  env: NodeJS.ProcessEnv = process.env,
): { state: 'run' } | { state: 'skip' | 'fail'; reason: string } {
  if (existsSync(path)) return { state: 'run' }
  const reason = `the seed page is not beside the repo (../shared/seed/durable-tools.md, looked for at ${path})`
  return isCi(env)
    ? { state: 'fail', reason: `${reason}; CI always has it, so with CI set its absence is a failure` }
    : { state: 'skip', reason: `${reason}; the docs/ pages of the repo are tested instead (set CI=true to make this a failure)` }
}

export function readSeedPage(): string {
  if (!existsSync(seedPagePath)) {
    throw new Error(
      `The seed page is missing at ${seedPagePath}. CI clones the repo with shared/ beside it: ` +
        'put the shared folder next to the repo root (../shared/seed/durable-tools.md).',
    )
  }
  return readFileSync(seedPagePath, 'utf8')
}

/**
 * Writes the seed's code blocks, concatenated unchanged, as one module in the
 * gitignored test/seed/.generated folder, and returns its path. Each caller gets its
 * own file name, so test files running in parallel never read a half-written module.
 */
export function writeSeedModule(fileName: string): { path: string; blocks: string[] } {
  const blocks = codeBlocks(readSeedPage(), SEED_GROUP)
  const path = writeModule(resolve(repoRoot, 'packages', 'ai-harness', 'test', 'seed', '.generated', fileName), blocks.join('\n'))
  return { path, blocks }
}

/** Typechecks one file with the repo's compiler options (strict, NodeNext, skipLibCheck). */
export const typecheck = (path: string): string[] => typecheckFiles([path], resolve(repoRoot, 'tsconfig.base.json'))
