/**
 * Test helpers for harness users: a scripted model that needs no network.
 * @packageDocumentation
 */
export { ScriptedTextAdapter, scriptedText, lastMessage } from './scripted-adapter.js'
export type { Script, ScriptedReply, ScriptedToolCall, ScriptInput } from './scripted-adapter.js'
export { createManualClock, type ManualClock } from '../contract/clock.js'
export { crashable, type CrashableStore, type CrashPoint } from './crashable-store.js'
export { drain, runUntilCrash } from './streams.js'
export { SECRET_FORMS, type SecretForm } from './secret-forms.js'
