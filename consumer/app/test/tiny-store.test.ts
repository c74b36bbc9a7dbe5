import { runConformance } from '@tanstack/ai-harness-conformance'
import { dumpTiny, type TinyData, tinyStore } from '../src/tiny-store.js'

// One Map per namespace; every createStore call is another "process" on it.
const databases = new Map<string, TinyData>()
const database = (namespace: string): TinyData => {
  const data = databases.get(namespace) ?? new Map()
  databases.set(namespace, data)
  return data
}

runConformance({
  name: 'tiny',
  createStore: ({ namespace }) => tinyStore(database(namespace)),
  dump: async ({ namespace }) => dumpTiny(database(namespace)),
  cleanup: async ({ namespace }) => void databases.delete(namespace),
  skip: {
    leases: 'a Map in one process has no second host to keep out',
    wakeups: 'no workers: sessions run in the process that opened them',
    sessions: 'nobody lists the sessions of a store this small',
  },
})
