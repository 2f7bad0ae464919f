// The HTTP client to the orchestrators (RESTCONF, and the transport of json-rpc.ts): each call
// through its adapter's pool and call queue (adapter-pools.ts), under the adapter's deadline and
// size limit (exchange.ts), its answer read by lib/orchestrator/upstream.ts.
import { HttpError } from '../../lib/http/errors.js'
import { upstreamPath } from '../../lib/orchestrator/adapter.js'
import { UpstreamInvalidEncoding, UpstreamResponseTooLarge, UpstreamUnsupportedEncoding } from '../../lib/orchestrator/errors.js'
import type { Caller } from '../../lib/orchestrator/call-queue.js'
import { decodedBody, parseContentEncoding } from '../../lib/orchestrator/content-encoding.js'
import { answersAccept, type RelayMethod } from '../../lib/orchestrator/relay-request.js'
import {
  decodedErrorAnswer, isClosedPoolError, isUpstreamSuccess, upstreamFailure, upstreamStatusError, upstreamUnexpectedMediaType, WHOLE_ANSWER_MAX_BYTES, type UpstreamAnswer
} from '../../lib/orchestrator/upstream.js'
import { adapterPools, MAX_UPSTREAM_RESPONSE_BYTES, type AdapterConnection, type AdapterPools, type AdapterPoolsOptions, type PoolStats } from './adapter-pools.js'
import { StreamingExchange, type UpstreamResponse } from './exchange.js'
import { relayTrace } from './tracing.js'
import type { Pool } from 'undici'

export type { UpstreamResponse } from './exchange.js'
export { MAX_UPSTREAM_RESPONSE_BYTES } from './adapter-pools.js'

/** A relayed call, its parameters already checked by lib/orchestrator/relay-request.ts. */
export interface UpstreamRequest {
  method: RelayMethod
  /** Path (and query) below the adapter's base URL. */
  path: string
  accept: string
  /** Absent: no body (and no Content-Type) at all. */
  body?: { text: string, contentType: string }
  /** A JSON-RPC session's cookie (plugins/orchestrator/json-rpc.ts); the caller's never go upstream. */
  cookie?: string
  /** The JSON-RPC method of the call, for its span. */
  rpcMethod?: string
}

/**
 * The typed operations (lib/orchestrator/operations.ts) read NSO's answers whole, to parse them:
 * one answer past this is a 502 UPSTREAM_RESPONSE_TOO_LARGE, which bounds memory per call.
 */
export const OPERATION_ANSWER_MAX_BYTES = 16 * 1024 * 1024

export interface OpenOptions {
  /** A body in a Content-Encoding comes decoded (at most MAX_UPSTREAM_RESPONSE_BYTES decoded). */
  decode?: boolean
  /** A 2xx answer whose body ends within this many bytes resolves once complete, with `whole`. */
  wholeBelow?: number
  /** A call still waiting for a connection when its caller leaves is dropped unsent. */
  caller?: Caller
}

/** A 2xx answer read whole. */
export type WholeAnswer = UpstreamAnswer & { setCookie?: string[] | undefined }

/** The service fastify.orchestrator: calls through an adapter, and the adapter registry's upkeep. */
export interface OrchestratorClient {
  /**
   * Sends `request` through adapter `id`. Resolves with a 2xx answer as soon as its headers are
   * in; throws HttpError 404 (unknown adapter), 502 (upstream error status, unreachable) or 504
   * (the adapter's timeoutMs passed). With `decode`, a body in a Content-Encoding comes decoded
   * (at most MAX_UPSTREAM_RESPONSE_BYTES decoded), and one the relay cannot decode is a 502;
   * without, it comes as it is, its `contentEncoding` saying in what. With `wholeBelow`, a 2xx
   * answer whose body ends within that many bytes resolves once complete, with `whole` (a failure
   * before then rejects, as before the status line); a larger one streams as ever. With `caller`,
   * a call still waiting for a connection when its caller leaves is dropped unsent.
   */
  open: (id: string, request: UpstreamRequest, options?: OpenOptions) => Promise<UpstreamResponse>
  /**
   * As `open`, decoded, with the whole body read: at most `maxBytes` (default
   * MAX_UPSTREAM_RESPONSE_BYTES), past which it is a 502 UPSTREAM_RESPONSE_TOO_LARGE.
   */
  send: (id: string, request: UpstreamRequest, options?: { maxBytes?: number, caller?: Caller }) => Promise<WholeAnswer>
  /** The registry the calls go through (json-rpc.ts reads an adapter's credentials there). */
  readonly pools: AdapterPools
  /** Drops adapter `id` (changed or deleted here): its pool closes once its requests are done. */
  forget: (id: string) => void
  /** The live pool of adapter `id`, if one was built (for diagnostics and tests). */
  poolOf: (id: string) => Pool | undefined
  /** Each live pool's connection counts and calls waiting for a connection, for metrics. */
  poolStats: () => PoolStats[]
  close: () => Promise<void>
}

/** The client over a registry of its own made with `options`, or over `pools`. */
export function orchestratorClient (options: AdapterPoolsOptions | { pools: AdapterPools }): OrchestratorClient {
  const pools = 'pools' in options ? options.pools : adapterPools(options)
  const { tracer } = pools

  function dispatch (id: string, conn: AdapterConnection, request: UpstreamRequest, release: () => void, wholeBelow: number | undefined): Promise<UpstreamResponse | UpstreamAnswer> {
    // Only these headers go upstream: the caller's (its Authorization above all) never do.
    const headers: Record<string, string> = { authorization: conn.authorization, accept: request.accept }
    if (request.body !== undefined) headers['content-type'] = request.body.contentType
    if (request.cookie !== undefined) headers.cookie = request.cookie
    const { timeoutMs } = conn.adapter
    const answered = (err: unknown, nsoStatus: number): Error =>
      upstreamFailure(id, err, { timeoutMs, maxBytes: MAX_UPSTREAM_RESPONSE_BYTES }, nsoStatus)
    const path = upstreamPath(conn.base, request.path)
    const trace = tracer === undefined ? undefined : relayTrace(tracer, { adapter: id, origin: conn.base.origin, method: request.method, path, rpcMethod: request.rpcMethod }, headers)
    return new Promise((resolve, reject) => {
      const exchange = new StreamingExchange({
        resolve,
        reject,
        done: release,
        failure: answered,
        accepts: (contentType) => answersAccept(request.accept, contentType),
        unexpectedType: (status, contentType) => upstreamUnexpectedMediaType(id, status, contentType, request.accept),
        timeoutMs,
        ...(wholeBelow === undefined ? {} : { wholeBelow }),
        trace
      })
      conn.pool.dispatch({
        method: request.method,
        path,
        headers,
        body: request.body?.text
      }, exchange)
    })
  }

  function decoded (id: string, answer: UpstreamResponse): UpstreamResponse {
    const coding = parseContentEncoding(answer.contentEncoding)
    if (coding === undefined) return answer
    if (typeof coding === 'object') {
      answer.body.destroy()
      throw new UpstreamUnsupportedEncoding(id, coding.unsupported)
    }
    const body = decodedBody(answer.body, coding, {
      maxBytes: MAX_UPSTREAM_RESPONSE_BYTES,
      tooLarge: () => new UpstreamResponseTooLarge(id, MAX_UPSTREAM_RESPONSE_BYTES),
      undecodable: (reason) => new UpstreamInvalidEncoding(id, reason)
    })
    // The decoded length is not known in advance; a `whole` body would be the encoded bytes.
    const { whole: _encoded, ...fields } = answer
    return { ...fields, contentEncoding: undefined, contentLength: undefined, body }
  }

  const failure = (id: string, conn: AdapterConnection, err: unknown): Error =>
    err instanceof HttpError ? err : upstreamFailure(id, err, { timeoutMs: conn.adapter.timeoutMs, maxBytes: MAX_UPSTREAM_RESPONSE_BYTES })

  async function exchange (id: string, request: UpstreamRequest, wholeBelow: number | undefined, caller: Caller | undefined): Promise<UpstreamResponse> {
    for (let attempt = 0; ; attempt++) {
      const conn = await pools.connection(id)
      const release = await pools.admit(id, conn, caller)
      let answer: UpstreamResponse | UpstreamAnswer
      try {
        answer = await dispatch(id, conn, request, release, wholeBelow)
      } catch (err) {
        // The pool was closed between lookup and dispatch: nothing was sent, build or take another.
        if (attempt === 0 && isClosedPoolError(err)) {
          pools.discard(id, conn)
          continue
        }
        throw failure(id, conn, err)
      }
      if (!isUpstreamSuccess(answer.status)) throw upstreamStatusError(id, await decodedErrorAnswer(answer as UpstreamAnswer))
      return answer as UpstreamResponse
    }
  }

  async function open (id: string, request: UpstreamRequest, options: OpenOptions = {}): Promise<UpstreamResponse> {
    const answer = await exchange(id, request, options.wholeBelow, options.caller)
    return options.decode === true ? decoded(id, answer) : answer
  }

  async function send (id: string, request: UpstreamRequest, options: { maxBytes?: number, caller?: Caller } = {}): Promise<WholeAnswer> {
    const maxBytes = options.maxBytes ?? MAX_UPSTREAM_RESPONSE_BYTES
    const answer = await open(id, request, { decode: true, wholeBelow: Math.min(maxBytes, WHOLE_ANSWER_MAX_BYTES), ...(options.caller === undefined ? {} : { caller: options.caller }) })
    const fields = {
      status: answer.status,
      contentType: answer.contentType,
      ...(answer.traceId === undefined ? {} : { traceId: answer.traceId }),
      ...(answer.setCookie === undefined ? {} : { setCookie: answer.setCookie })
    }
    if (answer.whole !== undefined && answer.whole.length <= maxBytes) return { ...fields, body: answer.whole }
    if (answer.contentLength !== undefined && answer.contentLength > maxBytes) {
      answer.body.destroy()
      throw new UpstreamResponseTooLarge(id, maxBytes)
    }
    const chunks: Buffer[] = []
    let bytes = 0
    for await (const chunk of answer.body) {
      bytes += (chunk as Buffer).length
      if (bytes > maxBytes) {
        answer.body.destroy()
        throw new UpstreamResponseTooLarge(id, maxBytes)
      }
      chunks.push(chunk as Buffer)
    }
    return { ...fields, body: Buffer.concat(chunks) }
  }

  return {
    open,
    send,
    pools,
    forget: pools.forget,
    poolOf: pools.poolOf,
    poolStats: pools.poolStats,
    close: pools.close
  }
}
