import fp from 'fastify-plugin'
import { Gauge } from 'prom-client'
import { basicAuthorization } from '../../lib/auth/basic-auth-header.js'
import { Readable } from 'node:stream'
import { Pool, type Dispatcher } from 'undici'
import { adapterNotFound, type RelayAdapter } from './adapters-repository.js'
import { HttpError } from '../../lib/http/errors.js'
import { splitBaseUrl, upstreamPath, type UpstreamBase } from '../../lib/orchestrator/adapter.js'
import type { RelayMethod } from '../../lib/orchestrator/relay-request.js'
import {
  isClosedPoolError, isUpstreamSuccess, upstreamFailure, upstreamStatusError, UPSTREAM_ERROR_BODY_MAX_BYTES, type UpstreamAnswer
} from '../../lib/orchestrator/upstream.js'

/** A relayed call, its parameters already checked by lib/orchestrator/relay-request.ts. */
export interface UpstreamRequest {
  method: RelayMethod
  /** Path (and query) below the adapter's base URL. */
  path: string
  accept: string
  /** Absent: no body (and no Content-Type) at all. */
  body?: { text: string, contentType: string }
}

// A full configuration read with ?deep can be tens of megabytes; far beyond that is a runaway.
// Answers stream through, so this bounds time and traffic, not memory.
export const MAX_UPSTREAM_RESPONSE_BYTES = 64 * 1024 * 1024

/**
 * A 2xx answer whose body is still arriving. Reading `body` pulls it from the orchestrator
 * (backpressure reaches the socket); destroying it ends the call. When the exchange fails after
 * this point (deadline, connection lost, too large), `body` errors with the HttpError that says
 * so (504 or 502).
 */
export interface UpstreamResponse {
  status: number
  contentType: string | undefined
  /** The announced Content-Length, when there was one. */
  contentLength: number | undefined
  body: Readable
}

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
}

export interface OrchestratorClientOptions {
  findAdapter: (id: string) => Promise<RelayAdapter | undefined>
  /** How long an adapter row is trusted before it is read again (0: read on every call). */
  cacheTtlMs: number
  /** Sockets per adapter. */
  connections: number
  /** A pool with no call for this long is closed, and built again on the next call (0: never). */
  poolIdleMs?: number
  now?: () => number
}

/**
 * One keep-alive undici Pool per adapter. Adapter rows are cached for `cacheTtlMs`, so a relay
 * costs no database round trip; when a re-read row has another revision (changed or re-created,
 * here or on another instance) the pool is rebuilt. `forget` drops an adapter changed here at once.
 * A pool without calls for `poolIdleMs` is closed (its sockets with it) and built again on use.
 */
export function orchestratorClient (options: OrchestratorClientOptions) {
  const { findAdapter, cacheTtlMs, connections } = options
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
    // that holds is the timer of each call (BufferedExchange).
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
    return { adapter, base, authorization, pool, fetchedAt: at, usedAt: at, active: 0 }
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
      throw shuttingDown()
    }
    entries.set(id, fresh)
    return fresh
  }

  async function connection (id: string): Promise<Connection | undefined> {
    if (closed) throw shuttingDown()
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

  function dispatch (id: string, conn: Connection, request: UpstreamRequest): Promise<UpstreamResponse | UpstreamAnswer> {
    // Only these headers go upstream: the caller's (its Authorization above all) never do.
    const headers: Record<string, string> = { authorization: conn.authorization, accept: request.accept }
    if (request.body !== undefined) headers['content-type'] = request.body.contentType
    const { timeoutMs } = conn.adapter
    conn.active++
    conn.usedAt = now()
    const done = (): void => {
      conn.active--
      conn.usedAt = now()
    }
    const midBody = (err: unknown): Error => upstreamFailure(id, err, { timeoutMs, maxBytes: MAX_UPSTREAM_RESPONSE_BYTES })
    return new Promise((resolve, reject) => {
      const exchange = new StreamingExchange({ resolve, reject, done, failure: midBody, timeoutMs })
      conn.pool.dispatch({
        method: request.method,
        path: upstreamPath(conn.base, request.path),
        headers,
        body: request.body?.text
      }, exchange)
    })
  }

  /**
   * Sends `request` through adapter `id`. Resolves with a 2xx answer as soon as its headers are
   * in; throws HttpError 404 (unknown adapter), 502 (upstream error status, unreachable) or 504
   * (the adapter's timeoutMs passed).
   */
  async function open (id: string, request: UpstreamRequest): Promise<UpstreamResponse> {
    for (let attempt = 0; ; attempt++) {
      const conn = await connection(id)
      if (conn === undefined) throw adapterNotFound(id)
      let answer: UpstreamResponse | UpstreamAnswer
      try {
        answer = await dispatch(id, conn, request)
      } catch (err) {
        // The pool was closed between lookup and dispatch: nothing was sent, build or take another.
        if (attempt === 0 && isClosedPoolError(err)) {
          if (entries.get(id) === conn) entries.delete(id)
          continue
        }
        throw failure(id, conn, err)
      }
      if (!isUpstreamSuccess(answer.status)) throw upstreamStatusError(id, answer as UpstreamAnswer)
      return answer as UpstreamResponse
    }
  }

  const failure = (id: string, conn: Connection, err: unknown): Error =>
    err instanceof HttpError ? err : upstreamFailure(id, err, { timeoutMs: conn.adapter.timeoutMs, maxBytes: MAX_UPSTREAM_RESPONSE_BYTES })

  return {
    open,

    /** As `open`, with the whole body read (at most MAX_UPSTREAM_RESPONSE_BYTES, which undici enforces). */
    async send (id: string, request: UpstreamRequest): Promise<UpstreamAnswer> {
      const answer = await open(id, request)
      const chunks: Buffer[] = []
      for await (const chunk of answer.body) chunks.push(chunk as Buffer)
      return { status: answer.status, contentType: answer.contentType, body: Buffer.concat(chunks) }
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

    /** Each live pool's connection counts, for metrics. */
    poolStats (): Array<{ adapter: string, connected: number, free: number, pending: number, running: number }> {
      return [...entries.entries()].map(([adapter, { pool }]) => {
        const { connected, free, pending, running } = pool.stats
        return { adapter, connected, free, pending, running }
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

interface ExchangeOptions {
  resolve: (answer: UpstreamResponse | UpstreamAnswer) => void
  reject: (err: unknown) => void
  /** Called once when the exchange is over, however it ended. */
  done: () => void
  /** The HttpError a failure after the headers becomes (the body stream errors with it). */
  failure: (err: unknown) => Error
  timeoutMs: number
}

/**
 * One upstream exchange, under a deadline that covers the whole of it (body included) and holds
 * to the millisecond, unlike undici's own header/body timers that tick about once a second.
 * A 2xx answer resolves at its headers with a body stream fed from here, paused and resumed with
 * its reader; an error status resolves once its body is read, up to UPSTREAM_ERROR_BODY_MAX_BYTES
 * (the call is then cut). A plain timer and undici's abort callback do this without an AbortSignal
 * per call.
 */
class StreamingExchange implements Dispatcher.DispatchHandler {
  #abort: ((err?: Error) => void) | undefined
  #resume: (() => void) | undefined
  #timedOut: Error | undefined
  // Until resolve or reject has been called.
  #settled = false
  #finished = false
  readonly #timer: NodeJS.Timeout
  #status = 0
  #contentType: string | undefined
  #contentLength: number | undefined
  #body: UpstreamBody | undefined
  #errorChunks: Buffer[] | undefined
  #errorBytes = 0
  #paused = false

  constructor (private readonly options: ExchangeOptions) {
    this.#timer = setTimeout(() => {
      // Named like AbortSignal.timeout()'s reason, which lib/orchestrator/upstream.ts maps to 504.
      this.#timedOut = new DOMException(`no answer within ${options.timeoutMs} ms`, 'TimeoutError')
      this.#fail(this.#timedOut)
      this.#abort?.(this.#timedOut)
    }, options.timeoutMs)
  }

  onConnect (abort: (err?: Error) => void): void {
    // A call that waited for a free socket past its deadline is dropped before it is written.
    if (this.#timedOut !== undefined) abort(this.#timedOut)
    else this.#abort = abort
  }

  onHeaders (statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    // Called again after a 1xx: the last call is the answer.
    if (statusCode < 200) return true
    this.#status = statusCode
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = (rawHeaders[i] as Buffer).toString('latin1').toLowerCase()
      if (name === 'content-type') this.#contentType = (rawHeaders[i + 1] as Buffer).toString('latin1')
      else if (name === 'content-length') {
        const length = Number((rawHeaders[i + 1] as Buffer).toString('latin1'))
        if (Number.isSafeInteger(length) && length >= 0) this.#contentLength = length
      }
    }
    this.#resume = resume
    if (!isUpstreamSuccess(statusCode)) {
      this.#errorChunks = []
      return true
    }
    this.#body = new UpstreamBody(this)
    this.#settled = true
    this.options.resolve({ status: statusCode, contentType: this.#contentType, contentLength: this.#contentLength, body: this.#body })
    return true
  }

  onData (chunk: Buffer): boolean {
    if (this.#body !== undefined) {
      if (this.#body.push(chunk)) return true
      this.#paused = true
      return false
    }
    if (this.#errorChunks === undefined || this.#settled) return true
    const room = UPSTREAM_ERROR_BODY_MAX_BYTES - this.#errorBytes
    if (chunk.length <= room) {
      this.#errorChunks.push(chunk)
      this.#errorBytes += chunk.length
      return true
    }
    // Enough of an error body: keep what fits, answer with it and cut the call.
    this.#errorChunks.push(chunk.subarray(0, room))
    this.#errorBytes += room
    this.#answerError(true)
    this.#abort?.(new Error('upstream error body read up to its limit'))
    return false
  }

  // undici never completes a request it aborted, so this runs only once and only while unsettled
  // or streaming.
  onComplete (): void {
    if (this.#body !== undefined) {
      if (this.#finish()) this.#body.push(null)
      return
    }
    this.#answerError(false)
  }

  onError (err: Error): void {
    this.#fail(err)
  }

  /** The reader wants more. */
  resume (): void {
    if (!this.#paused) return
    this.#paused = false
    this.#resume?.()
  }

  /** The reader went away (or the body failed): stop the call if it is still running. */
  cancel (): void {
    if (this.#finish()) this.#abort?.(new Error('the relayed answer is no longer read'))
  }

  #answerError (truncated: boolean): void {
    if (this.#settled) return
    this.#settled = true
    this.#finish()
    const chunks = this.#errorChunks ?? []
    const body = chunks.length === 1 ? chunks[0] as Buffer : Buffer.concat(chunks)
    this.options.resolve({ status: this.#status, contentType: this.#contentType, body, ...(truncated ? { truncated } : {}) })
  }

  #fail (err: unknown): void {
    if (!this.#finish()) return
    if (!this.#settled) {
      this.#settled = true
      this.options.reject(err)
      return
    }
    // Mid-body: the reader sees the failure as the stream's error.
    this.#body?.destroy(this.options.failure(err))
  }

  /** Ends the exchange's bookkeeping; false when it had already ended. */
  #finish (): boolean {
    if (this.#finished) return false
    this.#finished = true
    clearTimeout(this.#timer)
    this.options.done()
    return true
  }
}

/** The body of a 2xx answer as it arrives; see UpstreamResponse. */
class UpstreamBody extends Readable {
  constructor (private readonly exchange: StreamingExchange) {
    // As much as one socket read, so that a reader keeping up never pauses the socket.
    super({ highWaterMark: 64 * 1024 })
  }

  override _read (): void {
    this.exchange.resume()
  }

  override _destroy (err: Error | null, callback: (error?: Error | null) => void): void {
    this.exchange.cancel()
    callback(err)
  }
}

const shuttingDown = (): HttpError => new HttpError(503, 'The service is shutting down', { code: 'SHUTTING_DOWN' })

export type OrchestratorClient = ReturnType<typeof orchestratorClient>

declare module 'fastify' {
  interface FastifyInstance {
    orchestrator: OrchestratorClient
  }
}

export default fp(async (fastify) => {
  const repository = fastify.adaptersRepository
  const client = orchestratorClient({
    findAdapter: async (id) => await repository.findForRelay(id),
    cacheTtlMs: fastify.config.ORCHESTRATOR_ADAPTER_CACHE_TTL_MS,
    connections: fastify.config.ORCHESTRATOR_POOL_CONNECTIONS,
    poolIdleMs: fastify.config.ORCHESTRATOR_POOL_IDLE_MS
  })
  fastify.decorate('orchestrator', client)
  fastify.addHook('onClose', async () => { await client.close() })
  new Gauge({
    name: 'orchestrator_pool_connections',
    help: 'Connections of each orchestrator adapter pool: connected, free, and requests pending or running',
    labelNames: ['adapter', 'state'],
    registers: [fastify.metricsRegistry],
    collect () {
      this.reset()
      for (const { adapter, ...counts } of client.poolStats()) {
        for (const [state, value] of Object.entries(counts)) this.set({ adapter, state }, value)
      }
    }
  })
}, { name: 'orchestrator', dependencies: ['config', 'orchestrator-adapters', 'metrics'] })
