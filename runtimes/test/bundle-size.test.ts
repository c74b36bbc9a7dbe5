/**
 * The core's size in a Worker bundle, from `bundle-size.mjs` (esbuild, minified, on the
 * built dist). The bound that matters: with its dependencies the whole core stays under
 * zod's full API alone (454 KB), so the core never pulls in all of zod for the app.
 */
import { execFileSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

const script = join(dirname(fileURLToPath(import.meta.url)), '..', 'bundle-size.mjs')
interface Row {
  subject: string
  own: { minified: number; gzip: number }
  withDependencies: { minified: number; gzip: number }
}

it("bundles the core with zod's fromJSONSchema only, not all of zod, and durableTool alone without zod", () => {
  const rows = JSON.parse(execFileSync(process.execPath, [script, '--json'], { encoding: 'utf8', timeout: 60_000 })) as Row[]
  const [core, durableToolAlone] = rows
  console.log(rows.map((r) => `${r.subject}: own ${r.own.minified} B, with dependencies ${r.withDependencies.minified} B`).join('\n'))
  expect(core?.withDependencies.minified).toBeLessThan(454 * 1024)
  expect(core?.own.minified).toBeLessThan(core?.withDependencies.minified ?? 0)
  // durableTool does not reach zod or @tanstack/ai's runtime at all.
  expect(durableToolAlone?.withDependencies.minified).toBe(durableToolAlone?.own.minified)
})
