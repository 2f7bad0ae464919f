// NSO's JSON-RPC API (POST <baseUrl>/jsonrpc): the request documents and the reading of its
// answers, pure. A JSON-RPC error comes with HTTP 200; it is a 502 UPSTREAM_ERROR carrying NSO's
// error object, never a success. plugins/orchestrator/json-rpc.ts runs the session.
import { withDetails, type CatalogError } from '../http/errors.js'
import { UpstreamError, UpstreamInvalidJson } from './errors.js'
import { parseJson } from './upstream.js'

export const JSON_RPC_PATH = '/jsonrpc'
export const JSON_RPC_MEDIA_TYPE = 'application/json'

/** One request document: `{jsonrpc: "2.0", id, method, params}`. */
export function jsonRpcRequest (id: number, method: string, params: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params })
}

/**
 * The session cookie of a login's answer, as a Cookie header value (`sessionid_8080=...`): NSO
 * names it `sessionid_<port>`; undefined when the answer set none.
 */
export function sessionCookie (setCookie: readonly string[] | undefined): string | undefined {
  for (const line of setCookie ?? []) {
    const pair = (line.split(';')[0] ?? '').trim()
    const eq = pair.indexOf('=')
    if (eq > 0 && pair.slice(0, eq).startsWith('sessionid')) return pair
  }
  return undefined
}

export interface JsonRpcError { code?: unknown, type?: unknown, message?: unknown, data?: unknown }

/** The 502 of a JSON-RPC error: NSO's error object in `upstream.body.error`, its status (200) beside it. */
export function jsonRpcError (adapterId: string, method: string, error: JsonRpcError, status: number, traceId: string | undefined): CatalogError {
  const type = typeof error.type === 'string' ? error.type : undefined
  const message = typeof error.message === 'string' ? error.message : undefined
  const what = [type, message].filter((part) => part !== undefined).join(': ')
  const err = withDetails(new UpstreamError(adapterId, `${status} with a JSON-RPC error to ${method}${what === '' ? '' : ` (${what})`}`), {
    upstream: { status, body: { error }, ...(traceId === undefined ? {} : { traceId }) }
  })
  Object.defineProperty(err, 'details', { enumerable: false })
  return err
}

/**
 * The `result` of a JSON-RPC answer's body. Throws a 502: UPSTREAM_INVALID_JSON when it is not a
 * JSON object, UPSTREAM_ERROR when it carries `error` (or neither `result` nor `error`).
 */
export function jsonRpcResult (adapterId: string, method: string, answer: { status: number, body: Buffer, traceId?: string | undefined }): unknown {
  const json = parseJson(answer.body)
  if ('invalid' in json) throw new UpstreamInvalidJson(adapterId, json.invalid)
  const parsed = json.value
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new UpstreamInvalidJson(adapterId, `the answer to ${method} is not a JSON-RPC object`)
  }
  const document = parsed as Record<string, unknown>
  if (document.error !== undefined && document.error !== null) {
    const error = typeof document.error === 'object' ? document.error as JsonRpcError : { message: String(document.error) }
    throw jsonRpcError(adapterId, method, error, answer.status, answer.traceId)
  }
  if (!('result' in document)) throw jsonRpcError(adapterId, method, { message: 'an answer with neither result nor error' }, answer.status, answer.traceId)
  return document.result
}

/** The transaction handle of new_trans's result (`{th: 1}`). */
export function transactionHandle (adapterId: string, result: unknown): number {
  const th = (result as { th?: unknown } | null)?.th
  if (typeof th !== 'number' || !Number.isSafeInteger(th)) {
    throw jsonRpcError(adapterId, 'new_trans', { message: 'a result without a transaction handle (th)' }, 200, undefined)
  }
  return th
}
