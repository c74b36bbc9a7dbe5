#!/usr/bin/env node
// @ts-check
// Keeps the runtime readable in pieces: no file of packages/ai-harness/src/runtime or
// src/secrets over MAX_FILE_LINES lines, and no class in packages/*/src over
// MAX_CLASS_LINES. A file named in ALLOWED is being split and is let through meanwhile;
// the list only shrinks. Reads the code with the TypeScript parser, as the function-length check does.
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { shown, sourceFiles } from './source-files.mjs'

/** Longest file of the runtime, in lines. */
export const MAX_FILE_LINES = 400

/** Longest class, in lines from its first to its last. */
export const MAX_CLASS_LINES = 200

/** The folders whose files are held to MAX_FILE_LINES. */
export const RUNTIME_ROOTS = ['packages/ai-harness/src/runtime', 'packages/ai-harness/src/secrets']

/** Files over a limit while they are split (issue 26); remove a name once its file fits. */
/** @type {string[]} */
export const ALLOWED = []

/**
 * @typedef {{ file: string, what: string, lines: number, max: number }} Oversize
 */

/**
 * The classes of a file, with their length in lines.
 * @param {string} fileName
 * @param {string} text
 * @returns {{ name: string, line: number, lines: number }[]}
 */
export function classLengths(fileName, text) {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true)
  /** @type {{ name: string, line: number, lines: number }[]} */
  const found = []
  /** @param {ts.Node} node */
  const visit = (node) => {
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line
      found.push({ name: node.name?.getText(source) ?? '(anonymous class)', line: start + 1, lines: end - start + 1 })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** @param {string} text */
export const lineCount = (text) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0)

/**
 * The runtime files and the classes over their limits, the allowed files left out.
 * @param {{ runtime: readonly string[], all: readonly string[], allowed?: readonly string[], read?: (path: string) => string, name?: (path: string) => string }} files
 * @returns {Oversize[]}
 */
export function oversize({ runtime, all, allowed = [], read = (path) => readFileSync(path, 'utf8'), name = (path) => path }) {
  const letThrough = new Set(allowed)
  /** @type {Oversize[]} */
  const found = []
  for (const file of runtime) {
    if (letThrough.has(name(file))) continue
    const lines = lineCount(read(file))
    if (lines > MAX_FILE_LINES) found.push({ file: name(file), what: 'file', lines, max: MAX_FILE_LINES })
  }
  for (const file of all) {
    if (letThrough.has(name(file))) continue
    for (const c of classLengths(file, read(file))) {
      if (c.lines > MAX_CLASS_LINES)
        found.push({ file: `${name(file)}:${c.line}`, what: `class ${c.name}`, lines: c.lines, max: MAX_CLASS_LINES })
    }
  }
  return found
}

function main() {
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
  const found = oversize({
    runtime: sourceFiles(repo, RUNTIME_ROOTS),
    all: sourceFiles(repo, ['packages/*/src']),
    allowed: ALLOWED,
    name: (path) => shown(repo, path),
  })
  if (found.length === 0) {
    console.log(
      `check-sizes: no runtime file over ${MAX_FILE_LINES} lines, no class in packages/*/src over ${MAX_CLASS_LINES} (allowed while split: ${ALLOWED.length})`,
    )
    return
  }
  console.error(`check-sizes: ${found.length} over the limit; split each by job:`)
  for (const o of found) console.error(`  ${o.file} ${o.what}: ${o.lines} lines (at most ${o.max})`)
  process.exitCode = 1
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
