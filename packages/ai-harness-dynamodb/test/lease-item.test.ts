import { createManualClock } from '@tanstack/ai-harness/store'
import { describe, expect, it } from 'vitest'
import { scanNamespace } from '../src/index.js'
import { storesOfTest } from './support/stores.js'

// The suite's lease.after-delete proves fences keep increasing across deletes on every
// store. What is DynamoDB's own: a delete keeps the lease item (its fence is where the next
// lease counts on from), and that item must keep nothing else of the holder.
const stores = storesOfTest('lease-item')
const { admin, tableName } = stores

describe('the lease item after a delete on DynamoDB', () => {
  it('keeps the fence and nothing of the holder', async () => {
    const namespace = stores.namespace()
    const clock = createManualClock()
    const [a, b] = [stores.open({ namespace, clock }), stores.open({ namespace, clock })]
    const lease = await a.leases.acquire('s', 'host-owner-name', 60_000)
    const before = JSON.stringify(await scanNamespace({ client: admin, tableName, namespace }))
    expect(before).toContain('host-owner-name')
    await b.delete('s')
    const after = JSON.stringify(await scanNamespace({ client: admin, tableName, namespace }))
    expect(after).not.toContain('host-owner-name')
    expect((await b.leases.acquire('s', 'next', 60_000)).fence).toBeGreaterThan(lease.fence)
  })
})
