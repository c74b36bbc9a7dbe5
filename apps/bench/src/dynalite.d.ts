// dynalite ships no types; the bench uses only the factory and the server it returns.
declare module 'dynalite' {
  import type { Server } from 'node:http'

  interface DynaliteOptions {
    path?: string
    createTableMs?: number
    deleteTableMs?: number
    updateTableMs?: number
    maxItemSizeKb?: number
  }

  export default function dynalite(options?: DynaliteOptions): Server
}
