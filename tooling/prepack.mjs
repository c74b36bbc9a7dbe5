#!/usr/bin/env node
// @ts-check
// `prepack` of every published library: refuses to pack (and so to publish) a package whose
// build is missing or incomplete (`pnpm checkout` builds JavaScript only), which would ship a
// tarball without its code or its types.
//
//   node ../../tooling/prepack.mjs        (in the package's folder, as pnpm runs it)
//
// It does not build: `pnpm -r pack` packs several packages at once, and each build needs the
// builds of the packages it imports; one `pnpm build` first does them all in order.
import { existsSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sourceFiles } from './package-sources.mjs'

/**
 * What is wrong with the build of the package in `dir`, or undefined when it may be packed.
 * Every file its `exports` name must exist, and every `src/**.ts` (tests aside) must have
 * its `dist/**.js` and `.d.ts`. (Not by their times: a turbo cache hit leaves an older
 * dist/ beside a source git rewrote unchanged, and the build is then right.)
 * @param {string} dir
 * @returns {string | undefined}
 */
export function buildProblem(dir) {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  for (const target of exportTargets(manifest.exports)) {
    if (!existsSync(join(dir, target))) return `${target} (named by "exports") does not exist`
  }
  const src = join(dir, 'src')
  if (!existsSync(src)) return undefined
  for (const file of sourceFiles(src)) {
    const base = join(dir, 'dist', relative(src, file)).replace(/\.ts$/, '')
    for (const output of [`${base}.js`, `${base}.d.ts`]) {
      if (!existsSync(output)) return `${relative(dir, output)} (built from ${relative(dir, file)}) does not exist`
    }
  }
  return undefined
}

/**
 * The files an `exports` map points at (conditions and subpaths, all the way down).
 * @param {unknown} exports
 * @returns {string[]}
 */
function exportTargets(exports) {
  if (typeof exports === 'string') return [exports]
  if (exports && typeof exports === 'object') return Object.values(exports).flatMap(exportTargets)
  return []
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const problem = buildProblem(process.cwd())
  if (problem) {
    const { name } = JSON.parse(readFileSync('package.json', 'utf8'))
    console.error(
      `${name}: not packing, its build is missing: ${problem}. Build first: pnpm build (or pnpm turbo run build --filter=${name}...).`,
    )
    process.exit(1)
  }
}
