import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterAll, afterEach, beforeAll } from 'vitest'

/**
 * Installs an in-memory tracer for the file's tests (global provider and context manager,
 * reset after each test, removed after all) and returns the finished spans by name.
 */
export function recordSpans(): { exporter: InMemorySpanExporter; named: (name: string) => ReadableSpan[] } {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const contextManager = new AsyncLocalStorageContextManager()
  beforeAll(() => {
    context.setGlobalContextManager(contextManager.enable())
    trace.setGlobalTracerProvider(provider)
  })
  afterEach(() => exporter.reset())
  afterAll(async () => {
    await provider.shutdown()
    trace.disable()
    context.disable()
  })
  return { exporter, named: (name) => exporter.getFinishedSpans().filter((s) => s.name === name) }
}
