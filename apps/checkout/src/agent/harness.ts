import { defineHarness, type Harness } from '@tanstack/ai-harness'
import { createModel, type ModelChoice } from './model.js'
import { type CheckoutServices, type CheckoutToolOptions, checkoutTools } from './tools.js'

/** The harness name stored in each session's first record. */
export const HARNESS_NAME = 'checkout'

/** Tells a real model the same plan the scripted one follows. */
export const SYSTEM_PROMPT = [
  'You are the checkout agent of a small shop.',
  'For each order the user names, call the checkout tool with its orderId, then call notify to email the customer a one-line receipt',
  'that says "Your order <id> is paid (charge <chargeId>)." Call one tool at a time.',
  'If a tool returns an error, do not call it again blindly: say what happened. Finish with a short summary.',
].join(' ')

/** The checkout agent: the model, the seed's two tools, and the system prompt. */
export function checkoutHarness(model: ModelChoice, services: CheckoutServices, options: CheckoutToolOptions = {}): Harness {
  const { checkout, notify } = checkoutTools(services, options)
  return defineHarness({ name: HARNESS_NAME, adapter: createModel(model), tools: [checkout, notify], systemPrompts: [SYSTEM_PROMPT] })
}
