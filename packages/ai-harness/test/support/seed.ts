import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repo root: this file is packages/ai-harness/test/support/seed.ts. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..')

/** The public docs page, in the shared/ folder that CI clones beside the repo. */
export const seedPagePath = resolve(repoRoot, '..', 'shared', 'seed', 'durable-tools.md')

export const SEED_GROUP = 'harness-durable-tools'

/** The ```ts code blocks of one group of a docs page, in order, unchanged. */
export function codeBlocks(markdown: string, group: string): string[] {
  const blocks: string[] = []
  const fence = /^```ts([^\n]*)\n([\s\S]*?)^```[ \t]*$/gm
  for (const match of markdown.matchAll(fence)) {
    const info = (match[1] ?? '').trim().split(/\s+/)
    if (info.includes(`group=${group}`)) blocks.push(match[2]!)
  }
  return blocks
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
  const path = resolve(repoRoot, 'packages', 'ai-harness', 'test', 'seed', '.generated', fileName)
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, blocks.join('\n'))
  return { path, blocks }
}
