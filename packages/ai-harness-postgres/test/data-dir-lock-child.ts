/** Holds a data folder for `data-dir-lock.test.ts`: `node --import tsx test/data-dir-lock-child.ts <folder>`, until killed. */
import { lockDataDir } from '../src/index.js'

lockDataDir(process.argv[2] ?? '')
process.stdout.write('ready\n')
setInterval(() => {}, 1 << 30)
