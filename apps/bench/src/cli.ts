#!/usr/bin/env node
/**
 * `pnpm bench` (from the repository root) or `node apps/bench/dist/cli.js [--quick]`:
 * runs every section once, prints the tables on stdout (progress on stderr) and writes
 * the JSON result.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Command, Option } from 'commander'
import { DEFAULT_CONFIG, QUICK_CONFIG } from './config.js'
import { renderTables } from './report/table.js'
import { runBench, SECTION_NAMES, type SectionName } from './run.js'
import { STORE_NAMES, type StoreName } from './targets/target.js'

const RESULTS = fileURLToPath(new URL('../results/', import.meta.url))

const program = new Command()
  .name('bench')
  .description('The cost of durability per store, side by side with DBOS and LangGraph, in one run.')
  .option('--quick', 'a smoke run in under 30 seconds (CI); its numbers are not meaningful')
  .option('--out <file>', 'where to write the JSON (default: results/latest.json, or results/quick.json with --quick)')
  .addOption(new Option('--stores <names...>', 'only these stores').choices([...STORE_NAMES]))
  .addOption(new Option('--sections <names...>', 'only these sections').choices([...SECTION_NAMES]))
  .option('--baseline <commit>', 'the commit the plain section builds and compares with (default: the one before issue #31)')
  .action(async (options: { quick?: boolean; out?: string; stores?: StoreName[]; sections?: SectionName[]; baseline?: string }) => {
    const config = options.quick ? QUICK_CONFIG : DEFAULT_CONFIG
    const result = await runBench(config, { stores: options.stores, sections: options.sections, baseline: options.baseline })
    const out = path.resolve(options.out ?? path.join(RESULTS, options.quick ? 'quick.json' : 'latest.json'))
    await mkdir(path.dirname(out), { recursive: true })
    await writeFile(out, `${JSON.stringify(result, null, 2)}\n`)
    process.stdout.write(renderTables(result))
    process.stderr.write(`[bench] wrote ${out}\n`)
    // Exit non-zero when a section failed, so CI sees it; a blocked peer is a result, not a failure.
    process.exitCode = result.failures.length > 0 ? 1 : 0
  })

program.parseAsync().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
