#!/usr/bin/env node
// @ts-check
// Fails when an entry point that Bun, Deno and Cloudflare Workers import reaches a Node
// built-in: an import of `node:*` (or of a bare built-in such as `crypto`), or a use of a
// global only Node-like runtimes have (`Buffer`, `process`, `setImmediate`; workerd has none). Only the entry points listed in NODE_ONLY_ENTRIES may: they are
// the Node-only corners (the node:http adapter, the TCP fault proxy), kept apart so a
// Worker never loads them. Web Crypto, TextEncoder and timers without `unref` do the rest.
import { readFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { resolveSpecifier } from './check-cycles.mjs'
import { shown } from './source-files.mjs'

/** The packages that run on every runtime; PostgreSQL's needs `pg`, so Node, Bun or Deno, and is not here. */
export const PORTABLE_PACKAGES = [
  'packages/ai-harness',
  'packages/ai-harness-memory',
  'packages/ai-harness-dynamodb',
  'packages/ai-harness-s3',
]

/** Entry points (package folder and `exports` key) that may use Node: a Worker does not import them. */
export const NODE_ONLY_ENTRIES = ['packages/ai-harness ./http/node', 'packages/ai-harness ./testing/node']

/** Globals of Node (and Bun and Deno) that workerd does not have; a `typeof` test of one is fine. */
export const NODE_GLOBALS = ['Buffer', 'process', 'setImmediate', 'clearImmediate']

const BUILTINS = new Set(builtinModules.flatMap((name) => [name, name.split('/')[0] ?? name]))

/**
 * Whether a module specifier names a Node built-in.
 * @param {string} specifier
 */
export const isNodeBuiltin = (specifier) => specifier.startsWith('node:') || BUILTINS.has(specifier)

/**
 * What a file loads when it runs (type-only imports and exports are erased; `import { type A }`
 * is not, under verbatimModuleSyntax), and where it uses a Node global as a value.
 * @param {string} fileName
 * @param {string} text
 * @returns {{ loads: string[], globalUses: string[] }} specifiers, and `name (line n)`
 */
export function runtimeUses(fileName, text) {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true)
  /** @type {string[]} */ const loads = []
  /** @type {string[]} */ const globalUses = []
  /** @param {ts.Node} node */
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly && ts.isStringLiteral(node.moduleSpecifier)) {
      loads.push(node.moduleSpecifier.text)
    } else if (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      loads.push(node.moduleSpecifier.text)
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [first] = node.arguments
      if (first && ts.isStringLiteral(first)) loads.push(first.text)
    } else if (ts.isIdentifier(node) && NODE_GLOBALS.includes(node.text) && usedAsValue(node)) {
      globalUses.push(`${node.text} (line ${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1})`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return { loads, globalUses }
}

/**
 * `Buffer.from(…)`, `new Buffer(…)`, `setImmediate(…)`; not `x.Buffer` (a feature test of a global), a type, or a `typeof`.
 * @param {ts.Identifier} node
 */
function usedAsValue(node) {
  const parent = node.parent
  if (ts.isPropertyAccessExpression(parent)) return parent.expression === node
  return (ts.isCallExpression(parent) || ts.isNewExpression(parent)) && parent.expression === node
}

/**
 * The source file of each entry point of a package, from its `exports` (`./dist/x.js` is built from `./src/x.ts`).
 * @param {string} packageDir
 * @returns {Array<{ entry: string, file: string }>}
 */
export function entryPoints(packageDir) {
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'))
  return Object.entries(manifest.exports ?? {}).map(([entry, target]) => {
    const built = typeof target === 'string' ? target : target.import
    const file = join(
      packageDir,
      String(built)
        .replace(/^\.\/dist\//, 'src/')
        .replace(/\.js$/, '.ts'),
    )
    return { entry, file }
  })
}

/**
 * Every Node built-in an entry point reaches through the relative imports of its package,
 * with the chain of files from the entry to the one that uses it.
 * @param {string} entryFile
 * @param {(path: string) => string} [read]
 * @returns {Array<{ use: string, chain: string[] }>}
 */
export function nodeUsesFrom(entryFile, read = (path) => readFileSync(path, 'utf8')) {
  /** @type {Map<string, string[]>} */ const chains = new Map([[entryFile, [entryFile]]])
  const queue = [entryFile]
  /** @type {Array<{ use: string, chain: string[] }>} */ const found = []
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    const chain = chains.get(file) ?? [file]
    const { loads, globalUses } = runtimeUses(file, read(file))
    for (const specifier of loads) {
      if (isNodeBuiltin(specifier)) found.push({ use: `imports ${specifier}`, chain })
      const target = specifier.startsWith('.') ? resolveSpecifier(file, specifier) : undefined
      if (target && !chains.has(target)) {
        chains.set(target, [...chain, target])
        queue.push(target)
      }
    }
    for (const use of globalUses) found.push({ use: `uses ${use}`, chain })
  }
  return found
}

/**
 * The findings of every portable entry point of the given packages.
 * @param {string} repo
 * @param {readonly string[]} [packages]
 * @param {readonly string[]} [nodeOnly]
 */
export function checkNodeImports(repo, packages = PORTABLE_PACKAGES, nodeOnly = NODE_ONLY_ENTRIES) {
  /** @type {Array<{ entry: string, use: string, chain: string[] }>} */ const findings = []
  let entries = 0
  const listed = new Set(packages.flatMap((dir) => entryPoints(join(repo, dir)).map(({ entry }) => `${dir} ${entry}`)))
  // A Node-only entry that is gone from `exports` would let a new entry of that name in unchecked.
  for (const stale of nodeOnly.filter((entry) => !listed.has(entry)))
    findings.push({ entry: stale, use: 'is listed as Node-only but is no entry point: remove it from NODE_ONLY_ENTRIES', chain: [] })
  for (const dir of packages) {
    for (const { entry, file } of entryPoints(join(repo, dir))) {
      if (nodeOnly.includes(`${dir} ${entry}`)) continue
      entries++
      for (const finding of nodeUsesFrom(file)) findings.push({ entry: `${dir} ${entry}`, ...finding })
    }
  }
  return { entries, findings }
}

function main() {
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
  const { entries, findings } = checkNodeImports(repo)
  if (findings.length === 0) {
    console.log(`check-node-imports: ${entries} entry points reach no Node built-in`)
    return
  }
  console.error(
    `check-node-imports: ${findings.length} use(s) of Node built-ins reached from entry points that run on every runtime.\n` +
      '  Use Web APIs instead (crypto.randomUUID, crypto.getRandomValues, TextEncoder, btoa, setTimeout), or test for the\n' +
      '  global with typeof first, or move the code behind a\n' +
      '  Node-only entry point (listed in NODE_ONLY_ENTRIES in tooling/checks/check-node-imports.mjs):',
  )
  for (const { entry, use, chain } of findings) {
    console.error(`  ${entry}: ${chain.length > 0 ? `${shown(repo, chain.at(-1) ?? '')} ` : ''}${use}`)
    if (chain.length > 1) console.error(`    via ${chain.map((file) => shown(repo, file)).join(' -> ')}`)
  }
  process.exitCode = 1
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
