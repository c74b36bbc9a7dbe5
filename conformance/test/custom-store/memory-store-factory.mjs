// A racer module in plain JavaScript: a memory store, private to the racer that opens it.
import { memoryStore } from '@tanstack/ai-harness-memory'

export const createStore = ({ clock }) => memoryStore({ clock })
