import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from './run-cli.js'
import type { BenchResult } from '../src/report/result.js'

// The built CLI's plain-step section, quick: it builds the commit before issue #31 from git
// and runs the same plain step on both builds. This checks the writes, never the times.
let run: Awaited<ReturnType<typeof runCli>>
let result: BenchResult
let stdout: string

beforeAll(async () => {
  run = await runCli(['--quick', '--sections', 'plain', '--stores', 'memory'], 120_000)
  result = run.result
  stdout = run.stdout
}, 130_000)

afterAll(async () => {
  await run?.remove()
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
