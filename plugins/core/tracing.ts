// Traces (OpenTelemetry), when on: a span per request (@fastify/otel) with its route, status and
// user, and the tracer that the database, the relay and the Git transport start their spans with.
// When off (the default) nothing is registered: no hook, no wrapper, `fastify.tracer` is null.
import fp from 'fastify-plugin'
import type { Tracer } from '@opentelemetry/api'
import type { SpanProcessor } from '@opentelemetry/sdk-trace-node'
import type { TracingSettings } from '../../lib/tracing/settings.js'
import { pathOf } from '../../lib/http/public-url.js'
import packageJson from '../../package.json' with { type: 'json' }

declare module 'fastify' {
  interface FastifyInstance {
    /** Starts the service's own spans; null when tracing is off. */
    tracer: Tracer | null
  }
}

/** How long a stopping service waits for its last spans to be exported. */
export const SHUTDOWN_EXPORT_MS = 3000

export interface TracingOptions {
  /** Takes the spans instead of the configured exporter (tests: an in-memory exporter). */
  spanProcessor?: SpanProcessor
}

/** Who receives the spans: the configured exporter, batched. */
async function exporterProcessor (settings: TracingSettings): Promise<SpanProcessor> {
  const { BatchSpanProcessor, ConsoleSpanExporter } = await import('@opentelemetry/sdk-trace-node')
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http')
  const exporter = settings.exporter === 'console'
    ? new ConsoleSpanExporter()
    // A collector that does not answer must not hold spans (memory) for long: 10 s per export.
    : new OTLPTraceExporter({ url: settings.url, headers: settings.headers, timeoutMillis: 10_000 })
  return new BatchSpanProcessor(exporter)
}

// The context (the current span) follows async calls, and the trace context crosses HTTP as W3C
// traceparent. Both are process-wide in the OpenTelemetry API: set once, by the first app that traces.
let contextConfigured = false
async function configureContext (): Promise<void> {
  if (contextConfigured) return
  contextConfigured = true
  const { context, propagation } = await import('@opentelemetry/api')
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks')
  const { W3CTraceContextPropagator } = await import('@opentelemetry/core')
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
}

export default fp<TracingOptions>(async (fastify, opts) => {
  const settings = fastify.config.tracing
  if (settings === undefined && opts.spanProcessor === undefined) {
    fastify.decorate('tracer', null)
    return
  }
  // Loaded only when on: a service without traces does not load the SDK at all.
  const processor = opts.spanProcessor ?? await exporterProcessor(settings as TracingSettings)
  await configureContext()
  const { NodeTracerProvider } = await import('@opentelemetry/sdk-trace-node')
  const { resourceFromAttributes } = await import('@opentelemetry/resources')
  const { FastifyOtelInstrumentation } = await import('@fastify/otel')
  // The provider is this app's own, not the process-wide one: each app (and each test) keeps its spans.
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      'service.name': fastify.config.OTEL_SERVICE_NAME,
      'service.version': packageJson.version
    }),
    spanProcessors: [processor]
  })
  const instrumentation = new FastifyOtelInstrumentation({
    // A span per hook would be a dozen per request, and one for the handler doubles the spans of a
    // request for little: the request's span is the parent of the statements and calls it makes.
    instrumentHooks: false,
    instrumentHandler: false,
    requestHook: (span, request) => {
      // Fastify's attribute is the URL as sent: its query may hold a credential (?token=).
      span.setAttribute('url.path', pathOf(request.url))
      if (request.routeOptions.url !== undefined) span.updateName(`${request.method} ${request.routeOptions.url}`)
    }
  })
  instrumentation.setTracerProvider(provider)
  await fastify.register(instrumentation.plugin())
  // The user is known once authenticated (after the request span began); onSend runs before the
  // request span ends, for answers and errors alike.
  fastify.addHook('onSend', async (request) => {
    const username = (request as { user?: { username?: unknown } | null }).user?.username
    if (typeof username === 'string') request.opentelemetry().span?.setAttribute('enduser.id', username)
  })
  fastify.decorate('tracer', provider.getTracer(packageJson.name, packageJson.version))
  // After the server stopped: the last spans are sent, within SHUTDOWN_EXPORT_MS. A collector that
  // is away (the exporter retries it for seconds) must neither hold the stop nor fail it.
  fastify.addHook('onClose', async () => {
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<'late'>((resolve) => { timer = setTimeout(() => { resolve('late') }, SHUTDOWN_EXPORT_MS) })
    const outcome = await Promise.race([provider.shutdown().then(() => 'sent' as const), deadline])
      .catch((err: unknown) => { fastify.log.warn({ err }, 'the last traces could not be sent'); return 'failed' as const })
    clearTimeout(timer)
    if (outcome === 'late') fastify.log.warn({ waitedMs: SHUTDOWN_EXPORT_MS }, 'the last traces were not sent in time: dropped')
  })
}, { name: 'tracing', dependencies: ['config'] })
