import { QueryCommand } from '@aws-sdk/client-dynamodb'
import {
  checkListSessionsOptions,
  HarnessError,
  isHarnessError,
  type ListSessionsOptions,
  type SessionListStore,
} from '@tanstack/ai-harness/store'
import { ATTR, type KeyLayout, SESSION_INDEX, stringAttr } from './keys.js'
import type { Send } from './send.js'

export interface SessionContext {
  readonly tableName: string
  readonly keys: KeyLayout
  readonly send: Send
}

/**
 * The session listings, each page one query of the `sessions` index: the namespace's
 * session partition (one entry per log, from its first batch) or its waiting partition
 * (one entry per wakeup at `WAITING_FOR_PERSON`), sorted by id, which DynamoDB compares as
 * UTF-8 bytes: code point order. The index is eventually consistent, so a listing may lag
 * a moment behind an append, a delete or a schedule.
 */
export function dynamoSessions(ctx: SessionContext): SessionListStore {
  async function page(partition: string, options: ListSessionsOptions | undefined): Promise<string[]> {
    const { after, limit } = checkListSessionsOptions(options)
    const names = { '#ls': ATTR.listPartition, '#lid': ATTR.listId }
    const values = { ':ls': { S: partition }, ...(after === undefined ? {} : { ':after': { S: after } }) }
    try {
      const out = await ctx.send((client, { abortSignal }) =>
        client.send(
          new QueryCommand({
            TableName: ctx.tableName,
            IndexName: SESSION_INDEX,
            KeyConditionExpression: after === undefined ? '#ls = :ls' : '#ls = :ls AND #lid > :after',
            ExpressionAttributeNames: after === undefined ? { '#ls': ATTR.listPartition } : names,
            ExpressionAttributeValues: values,
            ScanIndexForward: true,
            Limit: limit,
          }),
          { abortSignal },
        ),
      )
      return (out.Items ?? []).map((item) => stringAttr(item, ATTR.listId))
    } catch (error) {
      throw missingIndex(error) ?? error
    }
  }
  return {
    list: (options) => page(ctx.keys.sessionPartition, options),
    waiting: (options) => page(ctx.keys.waitingPartition, options),
  }
}

/** A table made before the `sessions` index: say how to add it, with a code that says what is missing. */
function missingIndex(error: unknown): HarnessError | undefined {
  const cause = isHarnessError(error) ? (error.cause as Error | undefined) : undefined
  if (!cause || !/index/i.test(String(cause.message)) || !/ValidationException|ResourceNotFoundException/.test(String(cause.name))) return
  return new HarnessError(
    'CAPABILITY_MISSING',
    `The table has no "${SESSION_INDEX}" index, which the session listings query (${cause.message}). Add it with UpdateTable, as harnessTableDefinition() describes it.`,
    { cause: error },
  )
}
