// What the relay makes of an orchestrator's answer or failure (design "Orchestrator relay"):
// bodies decoded for the reply, and every failure turned into the one error shape.
import { STATUS_CODES } from 'node:http'
import { HttpError } from '../http/errors.js'
import { isJsonMediaType } from './relay-request.js'

/** An upstream answer as read off the wire. */
export interface UpstreamAnswer {
  status: number
  contentType: string | undefined
  body: Buffer
}

/** The body for a JSON reply: undefined when there is none, parsed when JSON, text otherwise. */
export function decodeUpstreamBody (contentType: string | undefined, body: Buffer): unknown {
  if (body.length === 0) return undefined
  const text = body.toString('utf8')
  if (!isJsonMediaType(contentType)) return text
  try {
    return JSON.parse(text) as unknown
  } catch {
    // A body that claims JSON but is not: the caller still sees what came.
    return text
  }
}

/** Only 2xx is a success: errors and redirects (never followed: they could lead elsewhere) are a 502. */
export function isUpstreamSuccess (status: number): boolean {
  return status >= 200 && status < 300
}

/** 502 for an upstream 3xx/4xx/5xx, carrying its status and body (e.g. `ietf-restconf:errors`) untouched. */
export function upstreamStatusError (adapterId: string, answer: UpstreamAnswer): HttpError {
  const reason = STATUS_CODES[answer.status]
  return new HttpError(502, `Orchestrator adapter "${adapterId}" answered ${answer.status}${reason === undefined ? '' : ` ${reason}`}`, {
    code: 'UPSTREAM_ERROR',
    details: { upstream: { status: answer.status, body: decodeUpstreamBody(answer.contentType, answer.body) ?? null } }
  })
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

/** 504 when the adapter's deadline passed, 502 when the orchestrator could not be reached or read. */
export function upstreamFailure (adapterId: string, err: unknown, limits: { timeoutMs: number, maxBytes: number }): HttpError {
  const code = errorCode(err)
  const name = (err as { name?: unknown } | null)?.name
  if (name === 'TimeoutError' || (code !== undefined && TIMEOUT_CODES.has(code))) {
    return new HttpError(504, `Orchestrator adapter "${adapterId}" did not answer within ${limits.timeoutMs} ms`,
      { code: 'UPSTREAM_TIMEOUT', cause: err })
  }
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') {
    return new HttpError(502, `Orchestrator adapter "${adapterId}" answered with more than ${limits.maxBytes} bytes`,
      { code: 'UPSTREAM_RESPONSE_TOO_LARGE', cause: err })
  }
  const message = err instanceof Error ? err.message : String(err)
  const detail = code === undefined || message.includes(code) ? message : `${code}: ${message}`
  return new HttpError(502, `Could not reach orchestrator adapter "${adapterId}" (${detail})`,
    { code: 'UPSTREAM_UNREACHABLE', cause: err })
}
