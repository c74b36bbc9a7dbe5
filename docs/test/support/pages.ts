import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type CodeGroup, codeGroups, modulePath, ungroupedBlocks, writeModule } from '@tanstack/ai-harness-doc-blocks'

const here = dirname(fileURLToPath(import.meta.url))
export const docsDir = resolve(here, '..', '..')
export const repoRoot = resolve(docsDir, '..')
const generated = resolve(here, '..', '.generated')

export interface DocPage {
  /** The page's path under docs/, e.g. `stores/postgres.md`. */
  readonly name: string
  readonly markdown: string
  readonly groups: readonly CodeGroup[]
}

/** Every markdown page under docs/ (not the tests). */
export function docPages(dir = docsDir): DocPage[] {
  const pages: DocPage[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      if (entry.name !== 'test' && entry.name !== 'node_modules') pages.push(...docPages(path))
    } else if (entry.name.endsWith('.md')) {
      const markdown = readFileSync(path, 'utf8')
      pages.push({ name: relative(docsDir, path), markdown, groups: codeGroups(markdown) })
    }
  }
  return pages.sort((a, b) => a.name.localeCompare(b.name))
}

export { ungroupedBlocks }

/** Where a page's group is written: one folder per page, so its groups can import each other. */
export function groupPath(page: DocPage, group: CodeGroup, ext = '.ts'): string {
  return modulePath(join(generated, page.name.replace(/\.md$/, '').replace(/[\\/]/g, '__')), group.name, ext)
}

/** Writes every group of every page as a module; returns the paths. */
export function writeGroups(pages: readonly DocPage[]): string[] {
  return pages.flatMap((page) => page.groups.map((group) => writeModule(groupPath(page, group), group.source)))
}
