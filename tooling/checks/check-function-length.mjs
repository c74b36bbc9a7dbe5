#!/usr/bin/env node
// @ts-check
// Lists the functions in packages/*/src longer than MAX_LINES lines. Each must be split,
// or carry a `// long: <reason>` comment on one of the lines just above it (or on its
// first line), saying why it reads best whole. Reads the code with the TypeScript
// compiler's parser, so strings, comments and template literals cannot fool it.
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { shown, sourceFiles } from './source-files.mjs'

/** Longest function, in lines from its first to its last, without a written reason. */
export const MAX_LINES = 80

/** Lines above a function searched for its `// long:` reason (a TSDoc block may sit between). */
const REASON_REACH = 30

/**
 * @typedef {{ name: string, line: number, lines: number, reason: string | undefined }} FunctionLength
 */

/**
 * Every function of a file with its length in lines and its `// long:` reason, if any.
 * @param {string} fileName
 * @param {string} text
 * @returns {FunctionLength[]}
 */
export function functionLengths(fileName, text) {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true)
  const lines = text.split('\n')
  /** @type {FunctionLength[]} */
  const found = []
  /** @param {ts.Node} node */
  const visit = (node) => {
    if (isFunction(node) && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line
      found.push({
        name: nameOf(node, source),
        line: start + 1,
        lines: end - start + 1,
        reason: reasonAbove(lines, start, holderLine(node, source)),
      })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/**
 * @param {ts.Node} node
 * @returns {node is ts.FunctionLikeDeclaration}
 */
function isFunction(node) {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  )
}

/**
 * A function's name as a reader finds it: its own, or that of the variable, property or
 * call argument that holds it.
 * @param {ts.FunctionLikeDeclaration} node
 * @param {ts.SourceFile} source
 */
function nameOf(node, source) {
  if (ts.isConstructorDeclaration(node)) return 'constructor'
  if (node.name) return node.name.getText(source)
  const parent = node.parent
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText(source)
  if (ts.isCallExpression(parent)) return `(function passed to ${parent.expression.getText(source).slice(0, 40)})`
  return '(anonymous function)'
}

/**
 * The first line of the statement that holds a function (`const x = () => …`,
 * `export default …`), where a comment about it sits.
 * @param {ts.Node} node
 * @param {ts.SourceFile} source
 */
function holderLine(node, source) {
  let holder = node
  while (
    holder.parent &&
    (ts.isVariableDeclaration(holder.parent) ||
      ts.isVariableDeclarationList(holder.parent) ||
      ts.isVariableStatement(holder.parent) ||
      ts.isPropertyAssignment(holder.parent) ||
      ts.isExportAssignment(holder.parent) ||
      ts.isParenthesizedExpression(holder.parent))
  ) {
    holder = holder.parent
  }
  return source.getLineAndCharacterOfPosition(holder.getStart(source)).line
}

/**
 * The reason written in a `// long: <reason>` comment on the function's first line, or
 * in the comment lines right above the statement that holds it.
 * @param {string[]} lines
 * @param {number} start the function's first line (0-based)
 * @param {number} holder the first line of the statement that holds it (0-based)
 */
function reasonAbove(lines, start, holder) {
  const own = reasonIn(lines[start] ?? '')
  if (own) return own
  for (let i = holder - 1; i >= Math.max(0, holder - REASON_REACH); i--) {
    const line = (lines[i] ?? '').trim()
    const reason = reasonIn(line)
    if (reason) return reason
    const comment = line.startsWith('//') || line.startsWith('*') || line.startsWith('/*') || line.startsWith('@')
    if (!comment) return undefined
  }
  return undefined
}

/** @param {string} line */
function reasonIn(line) {
  const match = /\/\/\s*long:\s*(\S.*)$/.exec(line)
  return match?.[1]?.trim()
}

/**
 * The functions over the limit without a reason, across the given files.
 * @param {readonly string[]} files
 * @param {number} [max]
 * @param {(path: string) => string} [read]
 */
export function longFunctions(files, max = MAX_LINES, read = (path) => readFileSync(path, 'utf8')) {
  return files.flatMap((file) =>
    functionLengths(file, read(file))
      .filter((fn) => fn.lines > max)
      .map((fn) => ({ file, ...fn })),
  )
}

function main() {
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
  const files = sourceFiles(repo, ['packages/*/src'])
  const long = longFunctions(files)
  const unexplained = long.filter((fn) => fn.reason === undefined)
  for (const fn of long.filter((f) => f.reason !== undefined)) {
    console.log(`  ${shown(repo, fn.file)}:${fn.line} ${fn.name}: ${fn.lines} lines (long: ${fn.reason})`)
  }
  if (unexplained.length === 0) {
    console.log(`check-function-length: no function in packages/*/src over ${MAX_LINES} lines without a reason (${long.length} with one)`)
    return
  }
  console.error(
    `check-function-length: ${unexplained.length} function(s) over ${MAX_LINES} lines; split each, or write why it reads best whole in a "// long: <reason>" comment above it:`,
  )
  for (const fn of unexplained) console.error(`  ${shown(repo, fn.file)}:${fn.line} ${fn.name}: ${fn.lines} lines`)
  process.exitCode = 1
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
