import { STATUS_CODES } from 'node:http'

/** The one error body of the service (Fastify's shape), plus extra detail fields where useful. */
export interface ErrorBody {
  statusCode: number
  error: string
  message: string
  code?: string
  [detail: string]: unknown
}

/** An error that carries its HTTP status and, optionally, extra fields for the body. */
export class HttpError extends Error {
  readonly statusCode: number
  readonly code?: string
  readonly details?: Record<string, unknown>

  constructor (statusCode: number, message: string, options: { code?: string, details?: Record<string, unknown>, cause?: unknown } = {}) {
    super(message, { cause: options.cause })
    this.name = 'HttpError'
    this.statusCode = statusCode
    this.code = options.code
    this.details = options.details
  }
}

// Codes from node's sockets and PostgreSQL (class 08 connection exception, class 57 operator
// intervention) that mean "the database cannot be reached right now", not "the query is wrong".
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN',
  '08000', '08001', '08003', '08004', '08006', '57P01', '57P02', '57P03'
])
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Client has encountered a connection error',
  'Cannot use a pool after calling end',
  'PGlite is closed'
]

/** True when `err` says the database is unreachable (a 503), rather than a bug (a 500). */
export function isDatabaseUnavailable (err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true
  return UNAVAILABLE_MESSAGES.some((m) => err.message.includes(m))
}

/** The 503 answered while the database cannot be reached. */
export function databaseUnavailable (cause?: unknown): HttpError {
  return new HttpError(503, 'The database is unavailable; try again shortly', { code: 'DATABASE_UNAVAILABLE', cause })
}

function explicitStatus (err: unknown): number | undefined {
  const status = (err as { statusCode?: unknown } | null)?.statusCode
  return typeof status === 'number' && status >= 400 && status <= 599 ? status : undefined
}

/**
 * Maps anything thrown to the body sent (its `statusCode` is the status). An error without a
 * status, or a 500 that is not a deliberate HttpError, is a bug: its body never carries internals.
 */
export function toErrorBody (err: unknown): ErrorBody {
  const status = explicitStatus(err)
  if (status === undefined) {
    if (isDatabaseUnavailable(err)) return toErrorBody(databaseUnavailable(err))
    return { statusCode: 500, error: 'Internal Server Error', message: 'Internal Server Error' }
  }
  if (status === 500 && !(err instanceof HttpError)) {
    return { statusCode: 500, error: 'Internal Server Error', message: 'Internal Server Error' }
  }
  const statusCode = status
  const error = STATUS_CODES[statusCode] ?? 'Error'
  const e = err as { message?: unknown, code?: unknown, details?: unknown }
  const body: ErrorBody = {
    statusCode,
    error,
    message: typeof e.message === 'string' && e.message !== '' ? e.message : error
  }
  if (typeof e.code === 'string') body.code = e.code
  if (typeof e.details === 'object' && e.details !== null) Object.assign(body, e.details)
  return body
}
