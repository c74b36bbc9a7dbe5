// @ts-check
// The web app's build (esbuild): the page's script bundled for the browser with
// @tanstack/ai-client in it (dist/public/app.js, beside the page's HTML and CSS), and the
// Node programs (the launcher, a server process) bundled with their own files and the
// repository's tooling/embedded-postgres, the packages left to node_modules.
import { copyFileSync, mkdirSync } from 'node:fs'
import { build } from 'esbuild'

mkdirSync('dist/public', { recursive: true })
for (const file of ['index.html', 'style.css']) copyFileSync(`src/page/${file}`, `dist/public/${file}`)
await build({
  entryPoints: ['src/page/app.ts'],
  outfile: 'dist/public/app.js',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  logLevel: 'warning',
})
await build({
  entryPoints: ['src/cli.ts', 'src/app.ts', 'src/screenshots.ts', 'src/server/main.ts'],
  outdir: 'dist',
  outbase: 'src',
  bundle: true,
  packages: 'external',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
})
