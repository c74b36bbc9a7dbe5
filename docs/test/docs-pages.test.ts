/**
 * Every page under docs/: each ```ts block belongs to a group, every group compiles with
 * the repository's compiler options, and every group runs (imported as a module, or as a
 * vitest file in a vitest of its own) unless its fence says `norun="why"`, which is
 * reported as a skipped test with that reason. What a page says its code does is then
 * checked on the module's exports and the fake services (`checks` below).
 */
import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { typecheck } from '@tanstack/ai-harness-doc-blocks'
import { beforeAll, describe, expect, it } from 'vitest'
import { checks } from './page-checks.js'
import { type DocPage, docPages, groupPath, repoRoot, ungroupedBlocks, writeGroups } from './support/pages.js'
import { installServices } from './support/services.js'

const pages = docPages()
const tsconfig = resolve(repoRoot, 'tsconfig.base.json')
let written: string[] = []

beforeAll(() => {
  written = writeGroups(pages)
})

describe('docs/', () => {
  it('has the guide pages, each with tested code', () => {
    const names = pages.map((p) => p.name)
    for (const page of [
      'durable-tools.md',
      'side-effects-without-keys.md',
      'waits.md',
      'sessions-hosts-workers.md',
      'resumable-streams.md',
      'writing-a-store.md',
      'stores/memory.md',
      'stores/postgres.md',
      'stores/dynamodb.md',
      'stores/s3.md',
    ]) {
      expect(names).toContain(page)
      expect(pages.find((p) => p.name === page)!.groups.length, page).toBeGreaterThan(0)
    }
  })

  it('every TypeScript block belongs to a group, so none escapes the tests', () => {
    const loose = pages.flatMap((page) => ungroupedBlocks(page.markdown).map((b) => `${page.name}:${b.line}`))
    expect(loose).toEqual([])
  })

  it("every group compiles with the repository's compiler options", () => {
    expect(typecheck(written, tsconfig)).toEqual([])
  })

  it('the typecheck is live: a group with a type error fails it', () => {
    // Written beside the generated groups, so it resolves packages as they do.
    const broken = join(dirname(written[0]!), 'zz-broken.ts')
    writeFileSync(broken, "import { durableTool } from '@tanstack/ai-harness'\nexport const wrong: number = durableTool\n")
    expect(typecheck([broken], tsconfig).join('\n')).toContain("is not assignable to type 'number'")
  })
})

for (const page of pages.filter((p) => p.groups.length > 0)) {
  describe(page.name, () => {
    for (const group of page.groups) {
      const label = `group ${group.name}`
      if (group.norun !== undefined) {
        it('says why a group does not run', () => expect(group.norun!.trim().length, label).toBeGreaterThan(10))
        it.skip(`${label}: compiles, does not run here (${group.norun})`, () => {})
        continue
      }
      if (group.vitest) {
        it(`${label} passes as a vitest file of its own`, async () => {
          const result = await runVitest(page, group.name)
          expect(result.numFailedTests, result.output).toBe(0)
          checks[`${page.name}#${group.name}`]?.({ module: result, services: installServices() })
        })
        continue
      }
      it(`${label} runs${checks[`${page.name}#${group.name}`] ? ', and does what the page says' : ''}`, async () => {
        const services = installServices()
        const module = (await import(/* @vite-ignore */ pathToFileURL(groupPath(page, group)).href)) as Record<string, unknown>
        await checks[`${page.name}#${group.name}`]?.({ module, services })
      })
    }
  })
}

/** Runs a generated test file in a vitest process of its own (it registers its own tests). */
function runVitest(page: DocPage, group: string): Promise<{ numFailedTests: number; numPassedTests: number; output: string }> {
  const file = groupPath(page, { name: group } as never)
  const dir = dirname(file)
  const report = join(dir, `${group}.report.json`)
  const vitest = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs')
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST')))
  return new Promise((resolvePromise, reject) => {
    execFile(
      process.execPath,
      [vitest, 'run', file, '--root', dir, '--reporter=json', `--outputFile=${report}`],
      { cwd: dir, env, timeout: 170_000, maxBuffer: 32 * 1024 * 1024 },
      async (error, stdout, stderr) => {
        try {
          const { readFile } = await import('node:fs/promises')
          const parsed = JSON.parse(await readFile(report, 'utf8'))
          resolvePromise({ ...parsed, output: `${stdout}\n${stderr}`.slice(-8000) })
        } catch {
          reject(new Error(`vitest on ${file} failed: ${error?.message}\n${stdout}\n${stderr}`))
        }
      },
    )
  })
}
