import { type ModelMessage, modelMessagesToUIMessages, type UIMessage } from '@tanstack/ai'
import type { HarnessStore } from '../contract/types.js'
import { inputRunId, readInbox } from '../runtime/inbox-log.js'
import { readAndFold } from '../runtime/session-fold.js'

/**
 * What TanStack AI's `ChatClient` asks for on mount with `persistence: true` (`GET ?threadId=`):
 * the session's transcript as UI messages, and the run still going, which the client then
 * replays from its start (`joinRun`). `interrupts` is always null: a question or an
 * approval is answered through `host.answer` / `host.approve`, not through the chat.
 */
export interface ChatHydration {
  messages: UIMessage[]
  activeRun: { runId: string } | null
  interrupts: null
}

/**
 * The hydration of a session, from its log and its inbox. A turn in flight (or the first
 * queued prompt when none is) is the active run; its prompt is the last message, and what
 * the turn said so far is left out: the client rebuilds it from the run's stream, once.
 */
export async function chatHydration(store: HarnessStore, sessionId: string): Promise<ChatHydration> {
  const state = await readAndFold(store, sessionId)
  if (state.nextSeq === 1) return { messages: [], activeRun: null, interrupts: null }
  let messages = state.messages as ModelMessage[]
  let runId: string | undefined
  const open = state.openTurn?.input
  if (open) {
    const prompt = messages.findLastIndex((m) => m.role === 'user')
    messages = messages.slice(0, prompt + 1)
    runId = inputRunId(sessionId, open.inputId)
  } else {
    const next = (await readInbox(store, sessionId)).entries.find((e) => e.seq > state.inboxSeq)
    if (next) {
      messages = [...messages, ...(next.record.messages as ModelMessage[])]
      runId = inputRunId(sessionId, next.record.inputId)
    }
  }
  return { messages: modelMessagesToUIMessages(messages), activeRun: runId ? { runId } : null, interrupts: null }
}
