/** Writes plain progress lines to stderr, so stdout stays free for `--json`. */
export type Progress = (line: string) => void

/** A progress writer with an optional prefix (children prefix theirs, so the story reads in order). */
export function stderrProgress(prefix = ''): Progress {
  return (line) => {
    process.stderr.write(`${prefix}${line}\n`)
  }
}
