/**
 * The inspector: a page for the people who look after sessions, served with the harness's
 * HTTP handler. `startInspector({ host })` on its own port, `inspectorListener({ host })`
 * to mount in your own server, or the `harness-inspector` command.
 * @packageDocumentation
 */
export {
  type Inspector,
  INSPECTOR_CSP,
  type InspectorListener,
  type InspectorListenerOptions,
  type InspectorOptions,
  inspectorListener,
  startInspector,
} from './server.js'
