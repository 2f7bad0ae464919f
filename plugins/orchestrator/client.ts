// The relay's client to the orchestrators: one keep-alive undici Pool per adapter, adapter rows
// cached, calls under their adapter's deadline and size limit (plugins/orchestrator/exchange.ts).
import type { Tracer } from '@opentelemetry/api'
import { Pool } from 'undici'
import { basicAuthorization } from '../../lib/auth/basic-auth-header.js'
import { HttpError } from '../../lib/http/errors.js'
import { splitBaseUrl, upstreamPath, type UpstreamBase } from '../../lib/orchestrator/adapter.js'
import {
  AdapterNotFound, RelayCallerGone, RelayQueueFull, RelayQueueTimeout, ShuttingDown, UpstreamInvalidEncoding, UpstreamResponseTooLarge, UpstreamUnsupportedEncoding
} from '../../lib/orchestrator/errors.js'
import { CallQueue, CallQueueRefusal, type Caller, type Release } from '../../lib/orchestrator/call-queue.js'
import { withDetails } from '../../lib/http/errors.js'
import { decodedBody, parseContentEncoding } from '../../lib/orchestrator/content-encoding.js'
import { answersAccept, type RelayMethod } from '../../lib/orchestrator/relay-request.js'
import {
  decodedErrorAnswer, isClosedPoolError, isUpstreamSuccess, upstreamFailure, upstreamStatusError, upstreamUnexpectedMediaType, WHOLE_ANSWER_MAX_BYTES, type UpstreamAnswer
} from '../../lib/orchestrator/upstream.js'
import type { RelayAdapter } from './adapters-repository.js'
import { StreamingExchange, type UpstreamResponse } from './exchange.js'
import { relayTrace } from './tracing.js'
import { withJsonRpcSession, type JsonRpcSession } from './json-rpc.js'

export type { UpstreamResponse } from './exchange.js'

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

// A full configuration read with ?deep can be tens of megabytes; far beyond that is a runaway.
// Answers stream through, so this bounds time and traffic, not memory.
export const MAX_UPSTREAM_RESPONSE_BYTES = 64 * 1024 * 1024
/**
 * The typed operations (lib/orchestrator/operations.ts) read NSO's answers whole, to parse them:
 * one answer past this is a 502 UPSTREAM_RESPONSE_TOO_LARGE, which bounds memory per call.
 */
export const OPERATION_ANSWER_MAX_BYTES = 16 * 1024 * 1024

interface Connection {
  adapter: RelayAdapter
  base: UpstreamBase
  authorization: string
  pool: Pool
  fetchedAt: number
  /** When a call last started or ended (for idle closing). */
  usedAt: number
  /** Calls under way. */
  active: number
  /** Admits at most `connections` calls at once; the others wait their turn here. */
  queue: CallQueue
}

export interface OrchestratorClientOptions {
  findAdapter: (id: string) => Promise<RelayAdapter | undefined>
  /** How long an adapter row is trusted before it is read again (0: read on every call). */
  cacheTtlMs: number
  /** Sockets per adapter: as many calls run at once. */
  connections: number
  /** Calls per adapter that may wait for a free socket (0: none wait); default 100. */
  queueMax?: number
  /** How long a call may wait for a free socket before it is refused; default 30000. */
  queueWaitMs?: number
  /** A pool with no call for this long is closed, and built again on the next call (0: never). */
  poolIdleMs?: number
  now?: () => number
  /** Traces the calls (tracing.ts) when given. */
  tracer?: Tracer | null
}

/**
 * One keep-alive undici Pool per adapter. Adapter rows are cached for `cacheTtlMs`, so a relay
 * costs no database round trip; when a re-read row has another revision (changed or re-created,
 * here or on another instance) the pool is rebuilt. `forget` drops an adapter changed here at once.
 * A pool without calls for `poolIdleMs` is closed (its sockets with it) and built again on use.
 */
export function orchestratorClient (options: OrchestratorClientOptions) {
  const { findAdapter, cacheTtlMs, connections } = options
  const queueMax = options.queueMax ?? 100
  const queueWaitMs = options.queueWaitMs ?? 30_000
  // A retry after the line's longest wait meets a line of calls that all came after it.
  const retryAfter = Math.max(1, Math.ceil(queueWaitMs / 1000))
  const tracer = options.tracer ?? undefined
  const poolIdleMs = options.poolIdleMs ?? 0
  const now = options.now ?? Date.now
  const entries = new Map<string, Connection>()
  const loading = new Map<string, Promise<Connection | undefined>>()
  // Bumped by forget(): a read that overlapped a local change is done again.
  let epoch = 0
  let closed = false

  // close() lets requests already in the pool finish; new ones get UND_ERR_CLOSED (and retry).
  const retire = (entry: Connection): void => { entry.pool.close().catch(() => {}) }

  function build (adapter: RelayAdapter): Connection {
    const base = splitBaseUrl(adapter.baseUrl)
    // undici's own timers are a backstop only: they tick about once a second, so the deadline
    // that holds is the timer of each call (StreamingExchange).
    const backstopMs = adapter.timeoutMs + 1000
    const pool = new Pool(base.origin, {
      connections,
      maxResponseSize: MAX_UPSTREAM_RESPONSE_BYTES,
      headersTimeout: backstopMs,
      bodyTimeout: backstopMs,
      connect: { rejectUnauthorized: adapter.rejectUnauthorized, ...(adapter.ca === null ? {} : { ca: adapter.ca }) }
    })
    const authorization = basicAuthorization(adapter.username, adapter.password)
    const at = now()
    const queue = new CallQueue({ slots: connections, maxWaiting: queueMax, maxWaitMs: queueWaitMs })
    return { adapter, base, authorization, pool, fetchedAt: at, usedAt: at, active: 0, queue }
  }

  // Idle pools are looked for every half idle time, so one closes between 1 and 1.5 idle times
  // after its last call; a call costs a counter and a clock read, no timer of its own.
  function closeIdlePools (): void {
    const at = now()
    for (const [id, entry] of entries) {
      if (entry.active === 0 && at - entry.usedAt >= poolIdleMs) {
        entries.delete(id)
        retire(entry)
      }
    }
  }
  const sweeper = poolIdleMs > 0 ? setInterval(closeIdlePools, Math.max(10, Math.floor(poolIdleMs / 2))) : undefined
  sweeper?.unref()

  async function load (id: string): Promise<Connection | undefined> {
    let adapter: RelayAdapter | undefined
    for (let round = 0; round < 3; round++) {
      const seen = epoch
      adapter = await findAdapter(id)
      if (seen === epoch) break
    }
    const current = entries.get(id)
    if (adapter === undefined) {
      if (current !== undefined) {
        entries.delete(id)
        retire(current)
      }
      return undefined
    }
    if (current?.adapter.revision === adapter.revision) {
      current.fetchedAt = now()
      return current
    }
    if (current !== undefined) retire(current)
    const fresh = build(adapter)
    if (closed) {
      retire(fresh)
      throw new ShuttingDown()
    }
    entries.set(id, fresh)
    return fresh
  }

  async function connection (id: string): Promise<Connection | undefined> {
    if (closed) throw new ShuttingDown()
    const entry = entries.get(id)
    if (entry !== undefined && now() - entry.fetchedAt < cacheTtlMs) return entry
    // Concurrent calls for one adapter share one read.
    let pending = loading.get(id)
    if (pending === undefined) {
      const started = load(id).finally(() => { if (loading.get(id) === started) loading.delete(id) })
      loading.set(id, started)
      pending = started
    }
    return await pending
  }

  // Calls past the pool's sockets wait here, not in undici's queue, so that the adapter's deadline
  // starts when a socket is free and bounds the orchestrator's answer only.
  async function admitted (id: string, conn: Connection, caller: Caller | undefined): Promise<Release> {
    try {
      return await conn.queue.acquire(caller)
    } catch (err) {
      /* c8 ignore next -- CallQueue refuses with nothing else */
      if (!(err instanceof CallQueueRefusal)) throw err
      if (err.reason === 'gone') throw new RelayCallerGone(id)
      const refusal = err.reason === 'full'
        ? new RelayQueueFull(id, conn.queue.running, conn.queue.waiting)
        : new RelayQueueTimeout(id, queueWaitMs)
      throw withDetails(refusal, { retryAfter })
    }
  }

  function dispatch (id: string, conn: Connection, request: UpstreamRequest, release: Release, wholeBelow: number | undefined): Promise<UpstreamResponse | UpstreamAnswer> {
    // Only these headers go upstream: the caller's (its Authorization above all) never do.
    const headers: Record<string, string> = { authorization: conn.authorization, accept: request.accept }
    if (request.body !== undefined) headers['content-type'] = request.body.contentType
    if (request.cookie !== undefined) headers.cookie = request.cookie
    const { timeoutMs } = conn.adapter
    conn.active++
    conn.usedAt = now()
    const done = (): void => {
      conn.active--
      conn.usedAt = now()
      release()
    }
    const answered = (err: unknown, nsoStatus: number): Error =>
      upstreamFailure(id, err, { timeoutMs, maxBytes: MAX_UPSTREAM_RESPONSE_BYTES }, nsoStatus)
    const path = upstreamPath(conn.base, request.path)
    const trace = tracer === undefined ? undefined : relayTrace(tracer, { adapter: id, origin: conn.base.origin, method: request.method, path, rpcMethod: request.rpcMethod }, headers)
    return new Promise((resolve, reject) => {
      const exchange = new StreamingExchange({
        resolve,
        reject,
        done,
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
  async function open (id: string, request: UpstreamRequest, options: { decode?: boolean, wholeBelow?: number, caller?: Caller } = {}): Promise<UpstreamResponse> {
    const answer = await exchange(id, request, options.wholeBelow, options.caller)
    return options.decode === true ? decoded(id, answer) : answer
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

  async function exchange (id: string, request: UpstreamRequest, wholeBelow: number | undefined, caller: Caller | undefined): Promise<UpstreamResponse> {
    for (let attempt = 0; ; attempt++) {
      const conn = await connection(id)
      if (conn === undefined) throw new AdapterNotFound(id)
      const release = await admitted(id, conn, caller)
      let answer: UpstreamResponse | UpstreamAnswer
      try {
        answer = await dispatch(id, conn, request, release, wholeBelow)
      } catch (err) {
        // The pool was closed between lookup and dispatch: nothing was sent, build or take another.
        if (attempt === 0 && isClosedPoolError(err)) {
          if (entries.get(id) === conn) entries.delete(id)
          continue
        }
        throw failure(id, conn, err)
      }
      if (!isUpstreamSuccess(answer.status)) throw upstreamStatusError(id, await decodedErrorAnswer(answer as UpstreamAnswer))
      return answer as UpstreamResponse
    }
  }

  /**
   * As `open`, decoded, with the whole body read: at most `maxBytes` (default
   * MAX_UPSTREAM_RESPONSE_BYTES), past which it is a 502 UPSTREAM_RESPONSE_TOO_LARGE.
   */
  async function send (id: string, request: UpstreamRequest, options: { maxBytes?: number, caller?: Caller } = {}): Promise<UpstreamAnswer & { setCookie?: string[] | undefined }> {
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

  const failure = (id: string, conn: Connection, err: unknown): Error =>
    err instanceof HttpError ? err : upstreamFailure(id, err, { timeoutMs: conn.adapter.timeoutMs, maxBytes: MAX_UPSTREAM_RESPONSE_BYTES })

  return {
    open,

    send,

    /**
     * Runs `work` in a JSON-RPC session on adapter `id`, logged in with the adapter's credentials
     * and logged out however `work` ends (plugins/orchestrator/json-rpc.ts).
     */
    async jsonRpcSession<T> (id: string, work: (session: JsonRpcSession) => Promise<T>, options: { caller?: Caller, onTraceId?: (traceId: string) => void } = {}): Promise<T> {
      const conn = await connection(id)
      if (conn === undefined) throw new AdapterNotFound(id)
      return await withJsonRpcSession({
        adapterId: id,
        credentials: { user: conn.adapter.username, passwd: conn.adapter.password },
        // A logout goes even when the caller has left: NSO would keep the session until it times out.
        send: async (request) => await send(id, request, {
          maxBytes: OPERATION_ANSWER_MAX_BYTES,
          ...(options.caller === undefined || request.rpcMethod === 'logout' ? {} : { caller: options.caller })
        }),
        ...(options.onTraceId === undefined ? {} : { onTraceId: options.onTraceId })
      }, work)
    },

    /** Drops adapter `id` (changed or deleted here): its pool closes once its requests are done. */
    forget (id: string): void {
      epoch++
      loading.delete(id)
      const entry = entries.get(id)
      if (entry === undefined) return
      entries.delete(id)
      retire(entry)
    },

    /** The live pool of adapter `id`, if one was built (for diagnostics and tests). */
    poolOf (id: string): Pool | undefined {
      return entries.get(id)?.pool
    },

    /** Each live pool's connection counts and calls waiting for a connection, for metrics. */
    poolStats (): Array<{ adapter: string, connected: number, free: number, pending: number, running: number, queued: number }> {
      return [...entries.entries()].map(([adapter, { pool, queue }]) => {
        const { connected, free, pending, running } = pool.stats
        return { adapter, connected, free, pending, running, queued: queue.waiting }
      })
    },

    async close (): Promise<void> {
      closed = true
      if (sweeper !== undefined) clearInterval(sweeper)
      const pools = [...entries.values()].map(async (entry) => { await entry.pool.close() })
      entries.clear()
      await Promise.all(pools)
    }
  }
}

export type OrchestratorClient = ReturnType<typeof orchestratorClient>
