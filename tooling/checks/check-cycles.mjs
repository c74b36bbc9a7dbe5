#!/usr/bin/env node
// @ts-check
// Fails on any import cycle between the modules of a source tree. Type-only imports
// count too: a cycle closed through a type still ties the modules' designs together,
// and the fix is the same (move the shared type to a module that imports nothing back).
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { shown, sourceFiles } from './source-files.mjs'

/**
 * The relative module specifiers a file imports or re-exports, type-only ones included,
 * and those of `import('./x.js')` expressions and types.
 * @param {string} fileName
 * @param {string} text
 * @returns {string[]}
 */
export function importedSpecifiers(fileName, text) {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true)
  /** @type {string[]} */
  const found = []
  /** @param {ts.Node} node */
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text)
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const expression = node.moduleReference.expression
      if (ts.isStringLiteral(expression)) found.push(expression.text)
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [first] = node.arguments
      if (first && ts.isStringLiteral(first)) found.push(first.text)
    } else if (ts.isImportTypeNode(node)) {
      const argument = node.argument
      if (ts.isLiteralTypeNode(argument) && ts.isStringLiteral(argument.literal)) found.push(argument.literal.text)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found.filter((specifier) => specifier.startsWith('.'))
}

/**
 * The file a relative specifier names: `./x.js` is written for `./x.ts` under NodeNext.
 * @param {string} from the importing file
 * @param {string} specifier
 * @returns {string | undefined}
 */
export function resolveSpecifier(from, specifier) {
  const base = resolve(dirname(from), specifier)
  const stem = base.replace(/\.(m|c)?jsx?$/, '')
  const candidates = [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, `${stem}.cts`, join(base, 'index.ts')]
  return candidates.find((candidate) => /\.(m|c)?tsx?$/.test(candidate) && existsSync(candidate))
}

/**
 * The import graph of the given files: each file to the files among them it imports.
 * @param {readonly string[]} files
 * @param {(path: string) => string} [read]
 * @returns {Map<string, string[]>}
 */
export function importGraph(files, read = (path) => readFileSync(path, 'utf8')) {
  const known = new Set(files)
  const graph = new Map()
  for (const file of files) {
    const targets = importedSpecifiers(file, read(file))
      .map((specifier) => resolveSpecifier(file, specifier))
      .filter((target) => target !== undefined && known.has(target))
    graph.set(file, /** @type {string[]} */ ([...new Set(targets)].sort()))
  }
  return graph
}

/**
 * The cycles of a graph, one per strongly connected component of more than one module
 * (or a module importing itself): the component's modules, and one shortest path through
 * them that starts and ends on the same module.
 * @param {Map<string, string[]>} graph
 * @returns {Array<{ modules: string[], path: string[] }>}
 */
export function findCycles(graph) {
  return components(graph)
    .filter((component) => component.length > 1 || (graph.get(component[0] ?? '') ?? []).includes(component[0] ?? ''))
    .map((component) => ({ modules: component, path: cycleThrough(graph, new Set(component)) }))
}

/**
 * Tarjan's strongly connected components, iterative so a deep tree cannot overflow the stack.
 * @param {Map<string, string[]>} graph
 * @returns {string[][]}
 */
function components(graph) {
  /** @type {Map<string, number>} */ const index = new Map()
  /** @type {Map<string, number>} */ const low = new Map()
  /** @type {string[]} */ const stack = []
  const onStack = new Set()
  /** @type {string[][]} */ const found = []
  /** @param {string} node */
  const enter = (node) => {
    index.set(node, index.size)
    low.set(node, index.size - 1)
    stack.push(node)
    onStack.add(node)
  }
  /** @param {string} node @param {number} value */
  const lower = (node, value) => low.set(node, Math.min(low.get(node) ?? value, value))
  for (const start of graph.keys()) {
    if (index.has(start)) continue
    /** @type {Array<{ node: string, next: number }>} */
    const work = [{ node: start, next: 0 }]
    enter(start)
    for (let frame = work.at(-1); frame !== undefined; frame = work.at(-1)) {
      const target = (graph.get(frame.node) ?? [])[frame.next++]
      if (target !== undefined) {
        if (!index.has(target)) {
          enter(target)
          work.push({ node: target, next: 0 })
        } else if (onStack.has(target)) {
          lower(frame.node, index.get(target) ?? 0)
        }
        continue
      }
      work.pop()
      const parent = work.at(-1)
      if (parent) lower(parent.node, low.get(frame.node) ?? 0)
      if (low.get(frame.node) !== index.get(frame.node)) continue
      /** @type {string[]} */ const component = []
      for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
        onStack.delete(member)
        component.push(member)
        if (member === frame.node) break
      }
      found.push(component.sort())
    }
  }
  return found
}

/**
 * One shortest cycle inside a component, from its first module (breadth-first back to it).
 * @param {Map<string, string[]>} graph
 * @param {Set<string>} members
 * @returns {string[]}
 */
function cycleThrough(graph, members) {
  const start = [...members].sort()[0] ?? ''
  /** @type {Map<string, string>} */ const cameFrom = new Map()
  const queue = [start]
  for (let node = queue.shift(); node !== undefined; node = queue.shift()) {
    for (const target of graph.get(node) ?? []) {
      if (!members.has(target)) continue
      if (target === start) return [...pathTo(cameFrom, start, node), start]
      if (!cameFrom.has(target)) {
        cameFrom.set(target, node)
        queue.push(target)
      }
    }
  }
  return [start, start]
}

/**
 * The path from `start` to `end` that a breadth-first search recorded.
 * @param {Map<string, string>} cameFrom
 * @param {string} start
 * @param {string} end
 */
function pathTo(cameFrom, start, end) {
  const path = [end]
  for (let node = end; node !== start; ) {
    node = cameFrom.get(node) ?? start
    path.unshift(node)
  }
  return path
}

function main() {
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
  const files = sourceFiles(repo)
  const cycles = findCycles(importGraph(files))
  if (cycles.length === 0) {
    console.log(`check-cycles: no import cycle among ${files.length} modules`)
    return
  }
  console.error(`check-cycles: ${cycles.length} import cycle(s); move what the modules share into a module that imports neither:`)
  for (const { modules, path } of cycles) {
    console.error(`  ${modules.length} modules: ${modules.map((file) => shown(repo, file)).join(', ')}`)
    console.error(`    e.g. ${path.map((file) => shown(repo, file)).join(' -> ')}`)
  }
  process.exitCode = 1
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
