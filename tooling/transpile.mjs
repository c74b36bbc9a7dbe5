#!/usr/bin/env node
// @ts-check
// Each TypeScript file of a project on its own to JavaScript and a source map (esbuild, no
// bundling), with no type information and no declarations: the apps' `build` (checkout,
// inspector, bench), and every package's `build:js`, which is what `pnpm checkout`,
// `pnpm inspector` and `pnpm bench` build.
//
//   node ../../tooling/transpile.mjs        (in the package's folder; reads tsconfig.build.json)
//
// Why not tsc: tsc reads every type the program reaches (the AWS SDK, OpenAI, zod: a
// checkout build reads 226k lines of declarations) even with --noCheck, which made the first
// `pnpm checkout` mostly a wait. A program needs only the JavaScript. The libraries' `build`
// (tsc) still writes their declarations, for typecheck, tests and packing; the apps are
// private and nothing reads theirs (the inspector's `types` are its src). `pnpm typecheck`
// still checks everything whole. `isolatedModules` (tsconfig.base.json) is what makes each
// file transpilable alone.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { build } from 'esbuild'
import { sourceFiles } from './package-sources.mjs'

const configPath = resolve('tsconfig.build.json')
// Every package's tsconfig.build.json is plain JSON: { compilerOptions: { rootDir, outDir }, include: [rootDir] }.
const { compilerOptions } = JSON.parse(readFileSync(configPath, 'utf8'))
const rootDir = resolve(compilerOptions.rootDir)
const outDir = resolve(compilerOptions.outDir)

await build({
  entryPoints: sourceFiles(rootDir),
  outdir: outDir,
  outbase: rootDir,
  tsconfig: configPath,
  format: 'esm',
  platform: 'node',
  target: 'es2022',
  sourcemap: true,
  bundle: false,
  logLevel: 'warning',
})
