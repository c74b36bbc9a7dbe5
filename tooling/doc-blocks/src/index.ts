/**
 * The code blocks of a markdown page, as the docs tests and the seed page test read them.
 *
 * A TypeScript block opens with ```ts and may carry attributes after the language:
 * `key=value` or `key="a value with spaces"`. The ones the tests read:
 *
 * - `group=NAME`: blocks of one group, in page order, are concatenated unchanged into
 *   one module, `NAME.ts`. Blocks of a group may import from another group's module
 *   (`./NAME.js`), as files of one project do.
 * - `norun="why"`: the group is typechecked but not run, and the tests report it as
 *   skipped with this reason (a block that needs a service the tests cannot start).
 * - `vitest`: the group is a test file: the tests run it in a vitest of its own.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import ts from 'typescript'

/** One fenced code block of a page. */
export interface CodeBlock {
  /** The language after the opening fence: `ts`, `sh`, `text`, or '' for none. */
  readonly lang: string
  readonly attrs: Readonly<Record<string, string>>
  /** The text between the fences, unchanged. */
  readonly code: string
  /** The 1-based line of the opening fence. */
  readonly line: number
}

/** The blocks of one group, ready to be written as a module. */
export interface CodeGroup {
  readonly name: string
  readonly blocks: readonly CodeBlock[]
  /** The blocks joined by newlines, unchanged. */
  readonly source: string
  /** Why the group is only typechecked, when a block says `norun="…"`. */
  readonly norun: string | undefined
  /** True when a block says `vitest`: the module is a test file. */
  readonly vitest: boolean
}

const FENCE = /^```([^\n`]*)\n([\s\S]*?)^```[ \t]*$/gm
const ATTRIBUTE = /([\w-]+)(?:=(?:"([^"]*)"|(\S+)))?/g

/** Parses the info string after the fence: the language, then attributes. */
export function parseInfo(info: string): { lang: string; attrs: Record<string, string> } {
  const trimmed = info.trim()
  const space = trimmed.search(/\s/)
  const lang = space === -1 ? trimmed : trimmed.slice(0, space)
  const attrs: Record<string, string> = {}
  if (space !== -1) {
    for (const match of trimmed.slice(space).matchAll(ATTRIBUTE)) attrs[match[1]!] = match[2] ?? match[3] ?? ''
  }
  return { lang, attrs }
}

/** Every fenced block of a page, in order. */
export function parseCodeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = []
  for (const match of markdown.matchAll(FENCE)) {
    const { lang, attrs } = parseInfo(match[1] ?? '')
    const line = markdown.slice(0, match.index).split('\n').length
    blocks.push({ lang, attrs, code: match[2]!, line })
  }
  return blocks
}

/** The ```ts code blocks of one group of a page, in order, unchanged. */
export function codeBlocks(markdown: string, group: string): string[] {
  return parseCodeBlocks(markdown)
    .filter((b) => b.lang === 'ts' && b.attrs.group === group)
    .map((b) => b.code)
}

/** The ```ts blocks of a page by group, in the order each group first appears. */
export function codeGroups(markdown: string): CodeGroup[] {
  const byName = new Map<string, CodeBlock[]>()
  for (const block of parseCodeBlocks(markdown)) {
    if (block.lang !== 'ts' || block.attrs.group === undefined) continue
    const list = byName.get(block.attrs.group) ?? []
    list.push(block)
    byName.set(block.attrs.group, list)
  }
  return [...byName].map(([name, blocks]) => ({
    name,
    blocks,
    source: blocks.map((b) => b.code).join('\n'),
    norun: blocks.map((b) => b.attrs.norun).find((reason) => reason !== undefined),
    vitest: blocks.some((b) => b.attrs.vitest !== undefined),
  }))
}

/** The ```ts blocks that belong to no group: the tests would never see them. */
export function ungroupedBlocks(markdown: string): CodeBlock[] {
  return parseCodeBlocks(markdown).filter((b) => b.lang === 'ts' && b.attrs.group === undefined)
}

/** Writes a module (creating its folder) and returns its path. */
export function writeModule(path: string, source: string): string {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, source)
  return path
}

/**
 * Typechecks files with the compiler options of a tsconfig (the repository's
 * tsconfig.base.json: strict, NodeNext), in one program. Returns the diagnostics as
 * `file: message` lines; empty when the files compile.
 */
export function typecheck(files: readonly string[], tsconfigPath: string): string[] {
  const { config, error } = ts.readConfigFile(tsconfigPath, ts.sys.readFile)
  if (error) throw new Error(`Cannot read ${tsconfigPath}: ${ts.flattenDiagnosticMessageText(error.messageText, '\n')}`)
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, dirname(tsconfigPath))
  const program = ts.createProgram([...files], { ...options, noEmit: true, declaration: false, declarationMap: false, sourceMap: false })
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : ''
    return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
  })
}

/** Joins a folder and a group name into the module's path. */
export const modulePath = (dir: string, group: string, ext = '.ts'): string => join(dir, `${group}${ext}`)
