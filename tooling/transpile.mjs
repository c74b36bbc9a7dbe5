#!/usr/bin/env node
// @ts-check
// The apps' build (checkout, inspector, bench): each TypeScript file of the project on its
// own to JavaScript and a source map, with no type information and no declarations.
//
//   node ../../tooling/transpile.mjs [tsconfig.build.json]
//
// Why not tsc: tsc reads every type the program reaches (the AWS SDK, OpenAI, zod: a
// checkout build reads 226k lines of declarations) even with --noCheck, which made the first
// `pnpm checkout` mostly a wait. The apps are private and nothing consumes their types
// (the inspector's `types` are its src), and `pnpm typecheck` still checks them whole.
// `isolatedModules` (tsconfig.base.json) is what makes each file transpilable alone.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'

const configPath = resolve(process.argv[2] ?? 'tsconfig.build.json')
const parsed = ts.getParsedCommandLineOfConfigFile(
  configPath,
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      console.error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
      process.exit(1)
    },
  },
)
if (!parsed) process.exit(1)
const { options, fileNames } = parsed
const rootDir = options.rootDir ?? dirname(configPath)
const outDir = options.outDir ?? rootDir
// Alone, a file cannot tell NodeNext its package is "type": "module" (every app is): say ESM.
const compilerOptions = {
  ...options,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  declaration: false,
  declarationMap: false,
  noEmit: false,
}

let failed = false
for (const fileName of fileNames) {
  if (fileName.endsWith('.d.ts')) continue
  const out = join(outDir, relative(rootDir, fileName)).replace(/\.(m|c)?tsx?$/, (_, m) => `.${m ?? ''}js`)
  const result = ts.transpileModule(readFileSync(fileName, 'utf8'), { compilerOptions, fileName, reportDiagnostics: true })
  for (const diagnostic of result.diagnostics ?? []) {
    failed = true
    console.error(`${fileName}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`)
  }
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, result.outputText)
  if (result.sourceMapText) {
    // transpileModule names the source by its bare file name: point it at the real file.
    const map = JSON.parse(result.sourceMapText)
    map.sources = [relative(dirname(out), fileName).split('\\').join('/')]
    map.file = basename(out)
    writeFileSync(`${out}.map`, JSON.stringify(map))
  }
}
if (failed) process.exit(1)
