import type { AnyTextAdapter } from '@tanstack/ai'
import { openaiText } from '@tanstack/ai-openai'
import { scriptedCheckoutModel } from './scripted-model.js'

/** Which model drives the agent: the scripted one, or OpenAI through `@tanstack/ai-openai`. */
export type ModelChoice = { kind: 'scripted' } | { kind: 'openai'; model: string; baseURL: string | undefined }

/** The default OpenAI model when `OPENAI_API_KEY` is set and `--model` is not. */
export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini'

/** OpenAI when a key is in the environment, else the scripted model. */
export function chooseModel(env: NodeJS.ProcessEnv, model: string | undefined): ModelChoice {
  if (!env.OPENAI_API_KEY) return { kind: 'scripted' }
  return { kind: 'openai', model: model ?? DEFAULT_OPENAI_MODEL, baseURL: env.OPENAI_BASE_URL || undefined }
}

/** A short label for progress lines and the summary. */
export function describeModel(choice: ModelChoice): string {
  return choice.kind === 'scripted' ? 'scripted (no network)' : `openai ${choice.model}${choice.baseURL ? ` at ${choice.baseURL}` : ''}`
}

/** The TanStack AI text adapter for a choice. `openaiText` reads `OPENAI_API_KEY` itself. */
export function createModel(choice: ModelChoice): AnyTextAdapter {
  if (choice.kind === 'scripted') return scriptedCheckoutModel()
  // The model name is the user's to pick (a proxy may serve others), so it is not narrowed to the adapter's list.
  return openaiText(choice.model as 'gpt-4o-mini', choice.baseURL ? { baseURL: choice.baseURL } : undefined) as AnyTextAdapter
}
