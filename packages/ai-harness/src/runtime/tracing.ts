import type { JsonObject } from '../json/json-types.js'
import type { SecretScanner } from '../secrets/secret-scanner.js'
import type { LoggedTrace } from './session-fold.js'
import type { SessionRuntime } from './session-runtime.js'

/**
 * OpenTelemetry spans of the runtime, through `@opentelemetry/api` only. The API is an
 * optional peer: it is imported at first use, and when it is not installed every span
 * here is a no-op. With the API but no SDK registered, the API's own no-op tracer
 * records nothing. No attribute or status message holds a secret of the session: every
 * string passes the session's scanner first. This module has the spans and the turn's
 * span; the store's client spans are in `store-tracing.ts`, a worker's poll span in
 * `worker-tracing.ts`.
 *
 * The types below are the few parts of the API the runtime uses, written out so that
 * the package's types do not need `@opentelemetry/api` installed.
 */

/** An OpenTelemetry context (opaque). */
export type OtelContext = object
type AttributeValue = string | number | boolean
export type Attributes = Record<string, AttributeValue | undefined>

interface SpanContext {
  traceId: string
  spanId: string
  traceFlags: number
  isRemote?: boolean
}

interface OtelSpan {
  spanContext(): SpanContext
  setAttributes(attributes: Record<string, AttributeValue>): unknown
  setStatus(status: { code: number; message?: string }): unknown
  isRecording(): boolean
  end(): void
}

interface OtelTracer {
  startSpan(
    name: string,
    options?: { kind?: number; attributes?: Record<string, AttributeValue>; links?: Array<{ context: SpanContext }> },
    context?: OtelContext,
  ): OtelSpan
}

/** The parts of `@opentelemetry/api` the runtime uses. */
export interface OtelApi {
  trace: {
    getTracer(name: string, version?: string): OtelTracer
    getTracerProvider(): object
    setSpan(context: OtelContext, span: OtelSpan): OtelContext
    getSpan(context: OtelContext): OtelSpan | undefined
    setSpanContext(context: OtelContext, spanContext: SpanContext): OtelContext
    isSpanContextValid(spanContext: SpanContext): boolean
  }
  context: {
    active(): OtelContext
    with<T>(context: OtelContext, fn: () => T): T
  }
  ROOT_CONTEXT: OtelContext
}

/** The instrumentation scope of every span of the harness. */
export const TRACER_NAME = '@tanstack/ai-harness'

const SPAN_KIND_INTERNAL = 0
const SPAN_KIND_CLIENT = 2
const STATUS_ERROR = 2

// A name in a variable: bundlers and TypeScript leave the optional import alone.
const API_MODULE = '@opentelemetry/api'
let loading: Promise<OtelApi | undefined> | undefined
/** The import's outcome once it is known: the API, or null when it is not installed. */
let loaded: OtelApi | null | undefined

/** `@opentelemetry/api`, imported once at first use; undefined when it is not installed. */
export function otelApi(): Promise<OtelApi | undefined> {
  loading ??= import(API_MODULE).then(
    (module: { default?: OtelApi } & Partial<OtelApi>) => {
      const api = (module.trace ? module : module.default) as OtelApi | undefined
      loaded = api?.trace && api.context ? api : null
      return loaded ?? undefined
    },
    () => {
      loaded = null
      return undefined
    },
  )
  return loading
}

/** One span of the harness; every method is a no-op when tracing is off. */
export interface HarnessSpan {
  /** False when nothing records this span (no API, or no SDK): its attributes would go nowhere. */
  readonly records: boolean
  /** The context that holds this span (for child spans), or undefined when tracing is off. */
  readonly context: OtelContext | undefined
  /** The span's trace context, when it records and is valid: what a log keeps to join the trace later. */
  readonly logged: LoggedTrace | undefined
  /** Adds attributes (strings without the session's secrets). */
  set(attributes: Attributes): void
  /** Marks the span failed with the error's message, secrets cut out. */
  fail(error: unknown): void
  /** Runs `fn` with this span's context active, so spans started inside (a library's, the store's) nest under it. */
  run<T>(fn: () => T): T
  end(): void
}

const OFF: HarnessSpan = {
  records: false,
  context: undefined,
  logged: undefined,
  set() {},
  fail() {},
  run: (fn) => fn(),
  end() {},
}

export interface SpanOptions {
  /** The parent: a span's context. Default: the active context. */
  parent?: OtelContext
  /** A span context to join as parent (from the log), used when it is valid. */
  remoteParent?: LoggedTrace
  /** Link the span active now (for a resumed turn that joins its logged trace: what drives it now, e.g. a worker's poll). */
  linkActive?: boolean
  /** Cuts secrets out of string attributes and messages. */
  scanner?: SecretScanner
  /** `client` for store calls. */
  kind?: 'internal' | 'client'
}

/** A span's attributes, or what makes them: made only for a span that records. */
export type SpanAttributes = Attributes | (() => Attributes)

/**
 * Starts the span `name`; a no-op span when tracing is off. Once the API's import has
 * settled the span comes back at once, not as a promise: a step starts several spans.
 */
export function startSpan(name: string, attributes: SpanAttributes, options: SpanOptions = {}): HarnessSpan | Promise<HarnessSpan> {
  if (loaded !== undefined) return loaded ? openSpan(loaded, name, attributes, options) : OFF
  return otelApi().then((api) => (api ? openSpan(api, name, attributes, options) : OFF))
}

/**
 * The API's tracer, kept while the global provider is the same object: a tracer of the
 * API's proxy provider starts recording once an SDK registers, and a provider set after
 * `trace.disable()` is a new object, so its tracer is taken afresh.
 */
const tracers = new WeakMap<OtelApi, { provider: object; tracer: OtelTracer }>()

function tracerOf(api: OtelApi): OtelTracer {
  const provider = api.trace.getTracerProvider()
  const kept = tracers.get(api)
  if (kept?.provider === provider) return kept.tracer
  const tracer = api.trace.getTracer(TRACER_NAME)
  tracers.set(api, { provider, tracer })
  return tracer
}

/** The trace id of the API's invalid span context: what the no-op tracer's spans carry. */
const INVALID_TRACE_ID = '0'.repeat(32)

function openSpan(api: OtelApi, name: string, attributes: SpanAttributes, options: SpanOptions): HarnessSpan {
  const active = api.context.active()
  let parent = options.parent ?? active
  const links: Array<{ context: SpanContext }> = []
  if (options.remoteParent) {
    const remote: SpanContext = {
      traceId: options.remoteParent.traceId,
      spanId: options.remoteParent.spanId,
      traceFlags: options.remoteParent.flags,
      isRemote: true,
    }
    if (api.trace.isSpanContextValid(remote)) {
      parent = api.trace.setSpanContext(api.ROOT_CONTEXT, remote)
      const driver = options.linkActive ? api.trace.getSpan(active)?.spanContext() : undefined
      if (driver && api.trace.isSpanContextValid(driver)) links.push({ context: driver })
    }
  }
  const span = tracerOf(api).startSpan(
    name,
    { kind: options.kind === 'client' ? SPAN_KIND_CLIENT : SPAN_KIND_INTERNAL, ...(links.length > 0 ? { links } : {}) },
    parent,
  )
  const own = span.spanContext()
  // No SDK: the API's no-op tracer gives a span with no valid context, which nothing can
  // join or nest under. Skip the context work then (it is most of a step's tracing cost).
  if (!span.isRecording() && (own.traceId === INVALID_TRACE_ID || !api.trace.isSpanContextValid(own))) {
    return untraced(api, span, parent, active)
  }
  const { scanner } = options
  const clean = (value: AttributeValue): AttributeValue =>
    typeof value === 'string' && scanner && scanner.size > 0 ? scanner.redactText(value) : value
  const cleanAll = (given: Attributes): Record<string, AttributeValue> => {
    const out: Record<string, AttributeValue> = {}
    for (const [key, value] of Object.entries(given)) if (value !== undefined) out[key] = clean(value)
    return out
  }
  // Attributes only for a span that records: the scan for secrets costs nothing when no SDK listens.
  if (span.isRecording()) span.setAttributes(cleanAll(typeof attributes === 'function' ? attributes() : attributes))
  const context = api.trace.setSpan(parent, span)
  const logged =
    span.isRecording() && api.trace.isSpanContextValid(own)
      ? { traceId: own.traceId, spanId: own.spanId, flags: own.traceFlags & 0xff }
      : undefined
  let ended = false
  return {
    records: span.isRecording(),
    context,
    logged,
    set(attributes) {
      if (!ended && span.isRecording()) span.setAttributes(cleanAll(attributes))
    },
    fail(error) {
      if (ended || !span.isRecording()) return
      const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
      span.setStatus({ code: STATUS_ERROR, message: String(clean(message)) })
      const code = (error as { code?: unknown } | null)?.code
      if (typeof code === 'string') span.setAttributes({ 'harness.error.code': String(clean(code)) })
    },
    run: (fn) => api.context.with(context, fn),
    end() {
      if (ended) return
      ended = true
      span.end()
    },
  }
}

/** A span of the no-op tracer: it keeps the parent's context as it is, and runs in it. */
function untraced(api: OtelApi, span: OtelSpan, parent: OtelContext, active: OtelContext): HarnessSpan {
  return {
    records: false,
    context: parent,
    logged: undefined,
    set() {},
    fail() {},
    run: (fn) => (parent === active ? fn() : api.context.with(parent, fn)),
    end: () => span.end(),
  }
}

/**
 * Iterates `inner` with `span`'s context active in each step, so spans started while it
 * runs (a tool's, the store's, TanStack AI's) nest under `span`. A generator is not one
 * call, so `context.with` wraps each of its steps.
 */
export async function* inSpan<T, R = unknown>(span: HarnessSpan, inner: AsyncGenerator<T, R>): AsyncGenerator<T, R> {
  let done = false
  try {
    for (;;) {
      const step = await span.run(() => inner.next())
      if (step.done) {
        done = true
        return step.value
      }
      yield step.value
    }
  } finally {
    if (!done) await span.run(() => inner.return(undefined as R))
  }
}

/** Attribute names of the harness's spans. */
export const ATTR = {
  sessionId: 'harness.session.id',
  turnId: 'harness.turn.id',
  hostId: 'harness.host.id',
  harness: 'harness.name',
  resumed: 'harness.turn.resumed',
  outcome: 'harness.outcome',
  toolCallId: 'harness.tool.call.id',
  toolName: 'harness.tool.name',
  stepName: 'harness.step.name',
  attempt: 'harness.step.attempt',
  replayed: 'harness.step.replayed',
  bytes: 'harness.step.bytes',
  seq: 'harness.store.seq',
  records: 'harness.store.records',
  limit: 'harness.store.limit',
  workerId: 'harness.worker.id',
  claimed: 'harness.worker.claimed',
} as const

/** The span of a new turn, started before its `harness.turn.started` is logged, by session. */
const newTurns = new WeakMap<SessionRuntime, { turnId: string; span: HarnessSpan }>()

/**
 * Starts the span of a new turn (a child of the active context: the caller's request, if
 * it is traced) and returns what `harness.turn.started` keeps of it: `{ trace }` when the
 * span records, else nothing. The first run of the turn takes this span.
 */
export async function beginTurnTrace(session: SessionRuntime, turnId: string, hostId: string): Promise<JsonObject> {
  const span = await startSpan(
    'harness.turn',
    {
      [ATTR.sessionId]: session.sessionId,
      [ATTR.turnId]: turnId,
      [ATTR.hostId]: hostId,
      [ATTR.harness]: session.harness.name,
      [ATTR.resumed]: false,
    },
    { scanner: session.scanner },
  )
  newTurns.get(session)?.span.end()
  newTurns.set(session, { turnId, span })
  return span.logged ? { trace: { traceId: span.logged.traceId, spanId: span.logged.spanId, flags: span.logged.flags } } : {}
}

/** Ends the span `beginTurnTrace` started for a turn whose start was never logged (its write failed): no run takes it. */
export function dropTurnTrace(session: SessionRuntime, turnId: string, error: unknown): void {
  const fresh = newTurns.get(session)
  if (fresh?.turnId !== turnId) return
  newTurns.delete(session)
  fresh.span.fail(error)
  fresh.span.set({ [ATTR.outcome]: 'failed' })
  fresh.span.end()
}

/**
 * The span of one run of a turn: for the first run, the span `beginTurnTrace` started;
 * for a run after a crash, a wait or a hand-off, a new span in the same trace, a child of
 * the turn's span as `harness.turn.started` logged it (linked to what drives the run
 * now, e.g. a worker's poll). A turn whose start was not traced begins a trace here.
 */
export async function turnSpan(session: SessionRuntime, turnId: string): Promise<HarnessSpan> {
  const fresh = newTurns.get(session)
  if (fresh?.turnId === turnId) {
    newTurns.delete(session)
    return fresh.span
  }
  const open = session.state.openTurn
  return startSpan(
    'harness.turn',
    {
      [ATTR.sessionId]: session.sessionId,
      [ATTR.turnId]: turnId,
      [ATTR.hostId]: open?.host,
      [ATTR.harness]: session.harness.name,
      [ATTR.resumed]: true,
    },
    { scanner: session.scanner, remoteParent: open?.turnId === turnId ? open.trace : undefined, linkActive: true },
  )
}
