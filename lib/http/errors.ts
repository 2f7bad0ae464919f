import { STATUS_CODES } from 'node:http'
import createError from '@fastify/error'

/** The one error body of the service (Fastify's shape), plus extra detail fields where useful. */
export interface ErrorBody {
  statusCode: number
  error: string
  message: string
  code?: string
  [detail: string]: unknown
}

/**
 * An error that carries its HTTP status and, optionally, extra fields for the body. The errors of
 * the areas' catalogs (defineError) are HttpErrors; construct those, never this class directly.
 */
export class HttpError extends Error {
  readonly statusCode: number
  readonly code?: string
  details?: Record<string, unknown>

  constructor (statusCode: number, message: string, options: { code?: string, details?: Record<string, unknown>, cause?: unknown } = {}) {
    super(message, { cause: options.cause })
    this.name = 'HttpError'
    this.statusCode = statusCode
    this.code = options.code
    this.details = options.details
  }
}

/** One entry of an area's error catalog. */
export interface CatalogEntry {
  code: string
  statusCode: number
  /** The message template (util.format: each %s takes the next argument). */
  message: string
}

const catalog = new Map<string, CatalogEntry>()

/** Every code defined so far by the catalogs loaded (lib/<area>/errors.ts): docs/errors.md lists them. */
export function catalogEntries (): CatalogEntry[] {
  return [...catalog.values()]
}

/**
 * Defines one error of an area's catalog (@fastify/error): its code, status and message template,
 * each once. Its instances are HttpErrors: the error handler sends their message; a last argument
 * `{ cause }` keeps the cause for the log.
 */
export function defineError<Args extends unknown[] = []> (code: string, message: string, statusCode: number): CatalogErrorConstructor<Args> {
  if (catalog.has(code)) throw new Error(`error code ${code} is defined twice`)
  catalog.set(code, { code, statusCode, message })
  return createError(code, message, statusCode, HttpError as unknown as ErrorConstructor) as unknown as CatalogErrorConstructor<Args>
}

/** An error of a catalog: its code and status are set. */
export type CatalogError = HttpError & { code: string, statusCode: number }

/** The template's arguments, optionally followed by `{ cause }`. */
export interface CatalogErrorConstructor<Args extends unknown[]> {
  new (...args: Args | [...Args, { cause: unknown }]): CatalogError
}

/** The seconds an error says to wait before retrying (its `retryAfter` field), for a Retry-After header. */
export function retryAfterOf (err: unknown): number | undefined {
  const retryAfter = err instanceof HttpError ? err.details?.retryAfter : undefined
  return typeof retryAfter === 'number' ? retryAfter : undefined
}

/** `err` with fields added to its body (a relayed upstream answer, a retry delay). */
export function withDetails<E extends Error> (err: E, details: Record<string, unknown>): E {
  (err as E & { details?: Record<string, unknown> }).details = details
  return err
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

// The requests' own catalog: refusals of the service as a whole, whatever the route ("Requests" in
// docs/errors.md). Fastify's validation errors (FST_ERR_VALIDATION...) are Fastify's own.
export const DatabaseUnavailable = defineError('DATABASE_UNAVAILABLE', 'The database is unavailable; try again shortly', 503)
export const ServiceOverloaded = defineError('SERVICE_OVERLOADED', 'The service is overloaded; retry after the time in Retry-After', 503)
/** An answer cut short because its caller hung up: nobody reads it; it goes to the log and the audit trail. */
export const CallerGone = defineError('CALLER_GONE', 'The caller hung up before its answer was complete', 499)
export const RouteNotFound = defineError<[method: string, path: string]>('ROUTE_NOT_FOUND', 'Route %s:%s not found', 404)
// A JSON body's text (plugins/core/request-input.ts); each names the field, as `body/...`.
export const JsonDuplicateKey = defineError<[field: string]>('JSON_DUPLICATE_KEY',
  '%s is given more than once: a JSON object may name each key once', 400)
export const JsonTooDeep = defineError<[field: string, limit: number]>('JSON_TOO_DEEP', '%s nests deeper than %s levels: the body may not', 400)
export const JsonUnsafeNumber = defineError<[field: string, max: number]>('JSON_UNSAFE_NUMBER',
  '%s is a number beyond ±%s (2^53 - 1), which would not be kept exactly: send it as a string', 400)
export const NulCharacter = defineError<[field: string]>('NUL_CHARACTER', '%s contains a NUL character (\\u0000), which is not allowed', 400)
// What Fastify refuses before routing (app.ts, frameworkErrors), in the one error shape and
// without echoing the URL; the first two keep Fastify's codes.
export const MalformedUrl = defineError('FST_ERR_BAD_URL', 'The URL is malformed (invalid percent-encoding)', 400)
export const PathParameterTooLong = defineError('FST_ERR_MAX_PARAM_LENGTH', 'A path parameter of the URL is too long', 414)
export const MalformedRequest = defineError('MALFORMED_REQUEST', 'The request is malformed', 400)

/** The 503 answered while the database cannot be reached. */
export function databaseUnavailable (cause?: unknown): HttpError {
  return cause === undefined ? new DatabaseUnavailable() : new DatabaseUnavailable({ cause })
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
