import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BenchResult } from '../src/report/result.js'

// The built CLI's plain-step section, quick: it builds the commit before issue #31 from git
// and runs the same plain step on both builds. This checks the writes, never the times.
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url))

let dir: string
let result: BenchResult
let stdout: string

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error('Build the bench first: pnpm turbo run build --filter=bench...')
  dir = await mkdtemp(path.join(tmpdir(), 'bench-plain-'))
  const out = path.join(dir, 'plain.json')
  const args = [CLI, '--quick', '--sections', 'plain', '--stores', 'memory', '--out', out]
  stdout = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, args, { timeout: 120_000 }, (error, so, se) =>
      error ? reject(new Error(`the plain-step run failed: ${error.message}\n${se}`)) : resolve(so),
    )
  })
  result = JSON.parse(await readFile(out, 'utf8')) as BenchResult
}, 130_000)

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('a plain step.do on this build and on the commit before issue #31', () => {
  it('runs both builds in one run', () => {
    expect(result.failures).toEqual([])
    expect(result.plainStep?.builds.map((b) => b.build)).toEqual(['this build', 'before #31'])
    expect(result.plainStep?.builds[1]?.commit).toBe('0e91d372b40b4bbeb882853f6c36a087db81be2e')
    for (const build of result.plainStep?.builds ?? []) expect(build.step.samples, build.build).toBeGreaterThan(0)
    expect(stdout).toContain('### 8. A plain step.do')
  })

  it('writes exactly what it wrote before: one append of one record of the same bytes per step', () => {
    const [ours, before] = result.plainStep!.builds
    expect(ours).toMatchObject({ appendsPerStep: [1], recordsPerAppend: [1] })
    expect(before).toMatchObject({ appendsPerStep: [1], recordsPerAppend: [1] })
    expect(ours!.bytesPerStep).toEqual(before!.bytesPerStep)
    expect(result.plainStep!.sameWrites).toBe(true)
  })
})
