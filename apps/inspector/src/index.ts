/**
 * The inspector: a page for the people who look after sessions, served with the harness's
 * HTTP handler. `startInspector({ host })` in your own process, or the `inspector` command.
 * @packageDocumentation
 */
export { type Inspector, type InspectorOptions, startInspector } from './server.js'
