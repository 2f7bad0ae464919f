// A span per statement, when traces are on: a wrapper of the one database interface, so that the
// PostgreSQL server and the embedded database are traced alike. (pg's own instrumentation patches
// the module as it loads, which under ES modules takes a loader hook, and knows nothing of PGlite.)
import { context, SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api'
import type { Db, Queryable, QueryOptions } from './types.js'

/** The statement's first keyword (SELECT, INSERT, WITH...): the span's name, as the conventions ask. */
export function operationOf (text: string): string {
  const match = /^\s*(?:--[^\n]*\n\s*)*([A-Za-z]+)/.exec(text)
  return match === null ? 'SQL' : (match[1] as string).toUpperCase()
}

// The text is the service's own SQL: values always travel as parameters, which are never recorded.
const MAX_TEXT = 2048

/** `db` with a span per statement, transaction and advisory lock, as children of the current span. */
export function tracedDb (db: Db, tracer: Tracer): Db {
  const attributes = { 'db.system.name': 'postgresql', 'db.instance': db.kind }

  async function inSpan<T> (name: string, extra: Record<string, string>, fn: (span: Span) => Promise<T>): Promise<T> {
    return await tracer.startActiveSpan(name, { kind: SpanKind.CLIENT, attributes: { ...attributes, ...extra } }, async (span) => {
      try {
        return await fn(span)
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message })
        const code = (err as { code?: unknown }).code
        if (typeof code === 'string') span.setAttribute('db.response.status_code', code)
        throw err
      } finally {
        span.end()
      }
    })
  }

  const statement = (text: string): Record<string, string> => ({ 'db.operation.name': operationOf(text), 'db.query.text': text.slice(0, MAX_TEXT) })

  const traced = (q: Queryable): Queryable => ({
    query: async <R>(text: string, params?: unknown[], options?: QueryOptions) => await inSpan(operationOf(text), statement(text), async (span) => {
      const result = await q.query<R>(text, params, options)
      span.setAttribute('db.response.returned_rows', result.rowCount)
      return result
    }),
    exec: async (script) => { await inSpan('SCRIPT', statement(script), async () => { await q.exec(script) }) }
  })

  const own = traced(db)
  return {
    kind: db.kind,
    query: own.query,
    exec: own.exec,
    transaction: async (fn) => await inSpan('transaction', {}, async () => await db.transaction(async (tx) => await fn(traced(tx)))),
    withAdvisoryLock: async (key, fn) => {
      // The span is the wait for the lock; what runs under it stays a child of the caller's span.
      const parent = context.active()
      const span = tracer.startSpan('advisory lock', { kind: SpanKind.CLIENT, attributes }, parent)
      let waiting = true
      try {
        return await db.withAdvisoryLock(key, async () => {
          waiting = false
          span.end()
          return await context.with(parent, fn)
        })
      } finally {
        if (waiting) {
          span.setStatus({ code: SpanStatusCode.ERROR })
          span.end()
        }
      }
    },
    poolStats: () => db.poolStats(),
    maintenance: db.maintenance,
    close: async () => { await db.close() }
  }
}
