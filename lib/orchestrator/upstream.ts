// Reading NSO's answers, in one place: their status, media type and sizes, their JSON, NSO's
// error documents of both generations (RESTCONF's `ietf-restconf:errors` of 6.x, the `errors` of
// 5.x), and every failure turned into the one error shape (design "Orchestrator relay"). The relay
// (routes/orchestrator_manager/relay.ts), the typed operations (lib/orchestrator/operations.ts)
// and the JSON-RPC client (lib/orchestrator/json-rpc.ts) read answers through it.
import { STATUS_CODES } from 'node:http'
import { withDetails, type CatalogError } from '../http/errors.js'
import {
  UpstreamAnswerInterrupted, UpstreamError, UpstreamInvalidJson, UpstreamResponseTooLarge, UpstreamTimeout, UpstreamUnexpectedMediaType, UpstreamUnreachable
} from './errors.js'
import { JsonChecker } from './json-check.js'
import { decodeSmallBody, parseContentEncoding } from './content-encoding.js'
import { isJsonMediaType } from './relay-request.js'

/** How much of an upstream error body is read (and carried in the 502); the rest is dropped. */
export const UPSTREAM_ERROR_BODY_MAX_BYTES = 64 * 1024

/**
 * A restQuery answer that ends within this many bytes (one socket read) is relayed whole, in one
 * write with its length, rather than streamed: a stream's set-up and chunked framing cost a small
 * answer more than reading it. Larger answers stream, so memory per call stays bounded by this.
 */
export const WHOLE_ANSWER_MAX_BYTES = 64 * 1024
/** How much of it a log line carries. */
export const LOGGED_ERROR_BODY_MAX_CHARS = 1024

/** An upstream answer as read off the wire. */
export interface UpstreamAnswer {
  status: number
  contentType: string | undefined
  /** The Content-Encoding `body` is in, if any (see lib/orchestrator/content-encoding.ts). */
  contentEncoding?: string | undefined
  body: Buffer
  /** The body was longer than what was read (an error body past UPSTREAM_ERROR_BODY_MAX_BYTES). */
  truncated?: boolean
  /** NSO's X-Cisco-NSO-Trace-ID, when it sent one. */
  traceId?: string | undefined
}

/** A status with its reason phrase when it has one ("409 Conflict", "599"). */
export function statusText (status: number): string {
  const reason = STATUS_CODES[status]
  return `${status}${reason === undefined ? '' : ` ${reason}`}`
}

/**
 * The body for a JSON reply: undefined when there is none, parsed when it is complete JSON no
 * deeper than MAX_JSON_DEPTH, text otherwise (a body that claims JSON but is not, or was cut).
 */
export function decodeUpstreamBody (contentType: string | undefined, body: Buffer, truncated = false): unknown {
  if (body.length === 0) return undefined
  if (truncated || !isJsonMediaType(contentType)) return body.toString('utf8')
  const json = parseJson(body)
  return 'value' in json ? json.value : body.toString('utf8')
}

/** JSON text as NSO sent it: its value when it is complete JSON no deeper than MAX_JSON_DEPTH, else why not. */
export function parseJson (body: Buffer): { value: unknown } | { invalid: string } {
  const checker = new JsonChecker()
  const problem = checker.write(body) ?? checker.end()
  if (problem !== undefined) return { invalid: problem }
  return { value: JSON.parse(body.toString('utf8')) as unknown }
}

/**
 * A JSON answer body: `{value}` (undefined for an empty body or one of another media type, as
 * NSO's bodiless `text/html` 204), or `{invalid}` saying why it is not JSON.
 */
export function readJson (contentType: string | undefined, body: Buffer): { value: unknown } | { invalid: string } {
  if (body.length === 0 || !isJsonMediaType(contentType)) return { value: undefined }
  return parseJson(body)
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/** The member of a YANG JSON document whose local name (after any `module:`) is `name`. */
export function yangMember (document: unknown, name: string): unknown {
  if (!isObject(document)) return undefined
  for (const [key, value] of Object.entries(document)) {
    if (key === name || key.endsWith(`:${name}`)) return value
  }
  return undefined
}

/**
 * NSO's own words in an error answer's body: the error-message (else error-tag) of each error of
 * RESTCONF's `ietf-restconf:errors` (NSO 6.x) or the `errors` of NSO 5.x, or the text it sent.
 * Undefined when it sent nothing (NSO 5.3's bodiless 404).
 */
export function nsoErrorMessage (body: unknown): string | undefined {
  if (typeof body === 'string') return body.trim() === '' ? undefined : body.trim()
  const errors = yangMember(body, 'errors')
  const list = yangMember(errors, 'error')
  const messages = (Array.isArray(list) ? list : [list]).flatMap((error) => {
    const text = yangMember(error, 'error-message') ?? yangMember(error, 'error-tag')
    return typeof text === 'string' ? [text] : []
  })
  return messages.length === 0 ? undefined : messages.join('; ')
}

/**
 * An error answer with its body decoded from its Content-Encoding (up to
 * UPSTREAM_ERROR_BODY_MAX_BYTES decoded), so that the 502 carries the orchestrator's document and
 * not compressed bytes. A coding the relay does not know, or a body that does not decode, stays as it came.
 */
export async function decodedErrorAnswer (answer: UpstreamAnswer): Promise<UpstreamAnswer> {
  const coding = parseContentEncoding(answer.contentEncoding)
  if (coding === undefined || typeof coding === 'object' || answer.body.length === 0) return answer
  const decoded = await decodeSmallBody(answer.body, coding, UPSTREAM_ERROR_BODY_MAX_BYTES)
  if (decoded === undefined) return answer
  const truncated = answer.truncated === true || decoded.truncated
  return { status: answer.status, contentType: answer.contentType, traceId: answer.traceId, body: decoded.body, ...(truncated ? { truncated } : {}) }
}

/** Only 2xx is a success: errors and redirects (never followed: they could lead elsewhere) are a 502. */
export function isUpstreamSuccess (status: number): boolean {
  return status >= 200 && status < 300
}

/** What a log line shows of an orchestrator's error answer (its `upstream` field). */
export interface LoggedUpstreamAnswer {
  status: number
  body: string
  bytes: number
  truncated: boolean
}

/**
 * The 502 of an upstream 3xx/4xx/5xx. Its body carries the orchestrator's status and body (e.g.
 * `ietf-restconf:errors`) untouched; a log line of it carries the status and the body's first
 * LOGGED_ERROR_BODY_MAX_CHARS characters only.
 */
export function upstreamStatusError (adapterId: string, answer: UpstreamAnswer): CatalogError & { upstream: LoggedUpstreamAnswer } {
  const truncated = answer.truncated === true
  const err = withDetails(new UpstreamError(adapterId, statusText(answer.status)), {
    upstream: {
      status: answer.status,
      body: decodeUpstreamBody(answer.contentType, answer.body, truncated) ?? null,
      ...(truncated ? { truncated: true } : {}),
      ...(answer.traceId === undefined ? {} : { traceId: answer.traceId })
    }
  })
  // The reply's details stay readable but out of the logged fields (an error is logged whole).
  Object.defineProperty(err, 'details', { enumerable: false })
  const text = answer.body.subarray(0, LOGGED_ERROR_BODY_MAX_CHARS * 4).toString('utf8')
  const cut = truncated || text.length > LOGGED_ERROR_BODY_MAX_CHARS || answer.body.length > LOGGED_ERROR_BODY_MAX_CHARS * 4
  const upstream = { status: answer.status, body: text.slice(0, LOGGED_ERROR_BODY_MAX_CHARS), bytes: answer.body.length, truncated: cut }
  return Object.assign(err, { upstream })
}

/** 502 for a 2xx answer that claims JSON and is not JSON a client can read. */
export function upstreamInvalidJson (adapterId: string, reason: string): CatalogError {
  return new UpstreamInvalidJson(adapterId, reason)
}

// undici's own deadlines (a backstop behind the AbortSignal) mean the same as ours.
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT'])

function errorCode (err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** True when `err` says a pool was closed under the request (nothing went upstream). */
export function isClosedPoolError (err: unknown): boolean {
  const code = errorCode(err)
  return code === 'UND_ERR_CLOSED' || code === 'UND_ERR_DESTROYED'
}

/**
 * 504 when the adapter's deadline passed, 502 when the orchestrator could not be reached or read.
 * With `nsoStatus` (the failure came after the orchestrator's status line) the error carries it,
 * and a broken connection is UPSTREAM_ANSWER_INTERRUPTED, never "could not reach": the orchestrator
 * got the request and may have carried it out.
 */
export function upstreamFailure (adapterId: string, err: unknown, limits: { timeoutMs: number, maxBytes: number }, nsoStatus?: number): CatalogError {
  const code = errorCode(err)
  const name = (err as { name?: unknown } | null)?.name
  const answered = nsoStatus === undefined ? undefined : { nsoStatus }
  const failure = ((): CatalogError => {
    if (name === 'TimeoutError' || (code !== undefined && TIMEOUT_CODES.has(code))) {
      return new UpstreamTimeout(adapterId, limits.timeoutMs, { cause: err })
    }
    if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') {
      return new UpstreamResponseTooLarge(adapterId, limits.maxBytes, { cause: err })
    }
    const message = err instanceof Error ? err.message : String(err)
    const detail = code === undefined || message.includes(code) ? message : `${code}: ${message}`
    if (nsoStatus !== undefined) return new UpstreamAnswerInterrupted(adapterId, statusText(nsoStatus), detail, { cause: err })
    return new UpstreamUnreachable(adapterId, detail, { cause: err })
  })()
  return answered === undefined ? failure : withDetails(failure, answered)
}

/** 502 for a 2xx answer with a body of another media type than the one asked for. */
export function upstreamUnexpectedMediaType (adapterId: string, status: number, contentType: string | undefined, accept: string): CatalogError {
  return new UpstreamUnexpectedMediaType(adapterId, statusText(status), contentType === undefined ? 'none (no Content-Type)' : `"${contentType}"`, `"${accept}"`)
}

/** A 2xx answer that has no body whatever its Content-Type says (NSO labels these text/html). */
export function isBodilessAnswer (status: number, contentLength: number | undefined): boolean {
  return status === 204 || status === 205 || contentLength === 0
}

/**
 * The media type of the `{}` that stands for a bodiless 2xx answer to a restQuery: the answer's
 * own type when it is JSON (NSO labels the 204 of an empty container `application/yang-data+json`),
 * else the asked one when it is JSON; undefined when neither is (the 204 then goes through as it is).
 */
export function emptyJsonType (accept: string, contentType: string | undefined): string | undefined {
  if (isJsonMediaType(contentType)) return contentType
  return isJsonMediaType(accept) ? accept : undefined
}
