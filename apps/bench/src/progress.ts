/** Progress goes to stderr, so stdout stays the table alone. */
const started = performance.now()

export function progress(message: string): void {
  const seconds = ((performance.now() - started) / 1000).toFixed(1).padStart(6)
  process.stderr.write(`[bench ${seconds}s] ${message}\n`)
}
