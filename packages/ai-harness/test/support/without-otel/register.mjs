// Loaded with `node --import`: makes `@opentelemetry/api` impossible to resolve in this process, as in an app that never installed it.
import { register } from 'node:module'

register(new URL('./hooks.mjs', import.meta.url))
