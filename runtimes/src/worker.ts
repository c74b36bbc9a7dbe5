/**
 * The flow as a Cloudflare Worker, for `workerd test`: bundled the way wrangler bundles
 * (esbuild, the `workerd`/`worker`/`browser` conditions), loaded without `nodejs_compat`.
 * The `CONFIG` binding says which store; the report is logged as one JSON line.
 */
import { checkoutAcrossCrash } from './checkout-flow.js'
import { type FlowConfig, flowStore } from './stores.js'

export default {
  async test(_controller: unknown, env: { CONFIG: string }): Promise<void> {
    const report = await checkoutAcrossCrash(flowStore(JSON.parse(env.CONFIG) as FlowConfig))
    console.log(JSON.stringify(report))
  },
}
