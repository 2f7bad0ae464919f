// The span of one relayed call to an orchestrator, when traces are on: adapter, method, path and
// status, a child span for the wait for a pooled connection, and the traceparent NSO receives.
import { context, propagation, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api'
import { pathOf } from '../../lib/http/public-url.js'
import { isUpstreamSuccess } from '../../lib/orchestrator/upstream.js'
import type { ExchangeTrace } from './exchange.js'

/**
 * Starts the call's span under the current one and writes its traceparent into `headers` (the
 * headers that go upstream). The span ends with the exchange, body included.
 */
export function relayTrace (tracer: Tracer, call: { adapter: string, origin: string, method: string, path: string, rpcMethod?: string | undefined }, headers: Record<string, string>): ExchangeTrace {
  const origin = new URL(call.origin)
  const span = tracer.startSpan(`orchestrator ${call.method}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'orchestrator.adapter': call.adapter,
      'http.request.method': call.method,
      // Without the query: the path says what was asked, the query may carry anything.
      'url.path': pathOf(call.path),
      'server.address': origin.hostname,
      'server.port': Number(origin.port === '' ? (origin.protocol === 'https:' ? 443 : 80) : origin.port),
      ...(call.rpcMethod === undefined ? {} : { 'rpc.system': 'jsonrpc', 'rpc.method': call.rpcMethod })
    }
  })
  const callContext = trace.setSpan(context.active(), span)
  // From the call's start to a socket taking it: a free connection of the adapter's pool, or a new one.
  const wait = tracer.startSpan('orchestrator connection wait', { attributes: { 'orchestrator.adapter': call.adapter } }, callContext)
  propagation.inject(callContext, headers)
  let waiting = true
  const endWait = (): void => {
    if (!waiting) return
    waiting = false
    wait.end()
  }
  return {
    connected: endWait,
    status (code) {
      span.setAttribute('http.response.status_code', code)
      if (!isUpstreamSuccess(code)) span.setStatus({ code: SpanStatusCode.ERROR })
    },
    nsoTraceId (id) {
      span.setAttribute('nso.trace_id', id)
    },
    end (err) {
      endWait()
      if (err !== undefined) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) })
        const code = (err as { code?: unknown }).code
        span.setAttribute('error.type', typeof code === 'string' ? code : err instanceof Error ? err.name : 'unknown')
      }
      span.end()
    }
  }
}
