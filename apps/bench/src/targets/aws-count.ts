import type { RequestCounter } from './requests.js'
import { awsKind } from './requests.js'

/** The part of an AWS SDK v3 client a counter needs (each client's own overloads differ, so loosely typed). */
interface WithMiddleware {
  middlewareStack: { add(middleware: any, options: { step: 'finalizeRequest'; name: string }): void }
}

type Next = (args: unknown) => Promise<unknown>

/**
 * Counts every HTTP request the client sends, at the SDK's finalize step (after
 * serialization, once per attempt), by command name.
 */
export function countAwsRequests(client: WithMiddleware, requests: RequestCounter): void {
  client.middlewareStack.add(
    (next: Next, context: { commandName?: string }) => async (args: unknown) => {
      const name = (context.commandName ?? 'unknown').replace(/Command$/, '')
      requests.add(awsKind(name), name)
      return next(args)
    },
    { step: 'finalizeRequest', name: 'benchRequestCounter' },
  )
}
