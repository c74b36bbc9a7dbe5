/**
 * `bun src/cli.ts '<config json>'` or `deno run … src/cli.ts '<config json>'`: runs the
 * checkout flow on the installed packages (resolved from node_modules, as an app on that
 * runtime gets them) and prints the report as one JSON line.
 */
import { checkoutAcrossCrash } from './checkout-flow.js'
import { type FlowConfig, flowStore } from './stores.js'

const config = JSON.parse(process.argv[2] ?? '{"store":"memory"}') as FlowConfig
const report = await checkoutAcrossCrash(flowStore(config))
console.log(JSON.stringify(report))
// The crashed host's lease timer hangs on, as in a killed process: leave.
process.exit(0)
