#!/usr/bin/env node
// @ts-check
// What an app ships for the core: esbuild bundles of the built @tanstack/ai-harness,
// minified as a Worker or browser build would be (workerd/worker/browser conditions),
// with the packages' own code only (every import of another package left out) and with
// its dependencies (zod and @tanstack/ai, which the app has anyway as peers). Prints a
// table; `--json` prints the numbers. Run `pnpm size` (it builds the core first).
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'

/** What is measured: a module that imports these names from the core's root entry (all of it when `names` is '*'). */
const SUBJECTS = [
  { label: "the core, every export of '@tanstack/ai-harness'", source: "export * from '@tanstack/ai-harness'" },
  { label: 'durableTool alone', source: "export { durableTool } from '@tanstack/ai-harness'" },
  {
    label: 'a server: defineHarness, durableTool, createHost, createWorker',
    source: "export { defineHarness, durableTool, createHost, createWorker } from '@tanstack/ai-harness'",
  },
]

/**
 * The minified size of one bundle, and its gzip size.
 * @param {string} source
 * @param {boolean} withDependencies
 */
async function measure(source, withDependencies) {
  const result = await build({
    stdin: { contents: source, resolveDir: import.meta.dirname, loader: 'js' },
    bundle: true,
    minify: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    logLevel: 'error',
    // Own code only: every other package stays an import (the core's `zod`, `@tanstack/ai`).
    ...(withDependencies ? {} : { external: ['zod', 'zod/*', '@tanstack/ai', '@tanstack/ai/*', '@opentelemetry/api'] }),
  })
  const bytes = result.outputFiles[0]?.contents ?? new Uint8Array()
  return { minified: bytes.length, gzip: gzipSync(bytes).length }
}

const kb = (/** @type {number} */ bytes) => `${(bytes / 1024).toFixed(1)} KB`

const rows = []
for (const subject of SUBJECTS) {
  const own = await measure(subject.source, false)
  const all = await measure(subject.source, true)
  rows.push({ subject: subject.label, own, withDependencies: all })
}

if (process.argv.includes('--json')) {
  console.log(JSON.stringify(rows))
} else {
  console.log('| bundle | own code, minified (gzip) | with zod and @tanstack/ai, minified (gzip) |')
  console.log('| --- | --- | --- |')
  for (const { subject, own, withDependencies } of rows)
    console.log(`| ${subject} | ${kb(own.minified)} (${kb(own.gzip)}) | ${kb(withDependencies.minified)} (${kb(withDependencies.gzip)}) |`)
}
