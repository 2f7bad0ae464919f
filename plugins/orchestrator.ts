import fp from 'fastify-plugin'
import { Gauge } from 'prom-client'
import { basicAuthorization } from '../lib/auth/basic-auth-header.js'
import { Pool, type Dispatcher } from 'undici'
import { adapterNotFound, type RelayAdapter } from './orchestrator-adapters.js'
import { HttpError } from '../lib/http/errors.js'
import { splitBaseUrl, upstreamPath, type UpstreamBase } from '../lib/orchestrator/adapter.js'
import type { RelayMethod } from '../lib/orchestrator/relay-request.js'
import {
  isClosedPoolError, isUpstreamSuccess, upstreamFailure, upstreamStatusError, type UpstreamAnswer
} from '../lib/orchestrator/upstream.js'

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
export const MAX_UPSTREAM_RESPONSE_BYTES = 64 * 1024 * 1024

interface Connection {
  adapter: RelayAdapter
  base: UpstreamBase
  authorization: string
  pool: Pool
  fetchedAt: number
}

export interface OrchestratorClientOptions {
  findAdapter: (id: string) => Promise<RelayAdapter | undefined>
  /** How long an adapter row is trusted before it is read again (0: read on every call). */
  cacheTtlMs: number
  /** Sockets per adapter. */
  connections: number
  now?: () => number
}

/**
 * One keep-alive undici Pool per adapter. Adapter rows are cached for `cacheTtlMs`, so a relay
 * costs no database round trip; when a re-read row has another revision (changed or re-created,
 * here or on another instance) the pool is rebuilt. `forget` drops an adapter changed here at once.
 */
export function orchestratorClient (options: OrchestratorClientOptions) {
  const { findAdapter, cacheTtlMs, connections } = options
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
    return { adapter, base, authorization, pool, fetchedAt: now() }
  }

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

  function dispatch (conn: Connection, request: UpstreamRequest): Promise<UpstreamAnswer> {
    // Only these headers go upstream: the caller's (its Authorization above all) never do.
    const headers: Record<string, string> = { authorization: conn.authorization, accept: request.accept }
    if (request.body !== undefined) headers['content-type'] = request.body.contentType
    return new Promise((resolve, reject) => {
      const exchange = new BufferedExchange(resolve, reject, conn.adapter.timeoutMs)
      conn.pool.dispatch({
        method: request.method,
        path: upstreamPath(conn.base, request.path),
        headers,
        body: request.body?.text
      }, exchange)
    })
  }

  return {
    /**
     * Sends `request` through adapter `id`. Resolves with a 2xx answer; throws HttpError 404
     * (unknown adapter), 502 (upstream error status, unreachable) or 504 (the adapter's timeoutMs passed).
     */
    async send (id: string, request: UpstreamRequest): Promise<UpstreamAnswer> {
      for (let attempt = 0; ; attempt++) {
        const conn = await connection(id)
        if (conn === undefined) throw adapterNotFound(id)
        let answer: UpstreamAnswer
        try {
          answer = await dispatch(conn, request)
        } catch (err) {
          // The pool was closed between lookup and dispatch: nothing was sent, build or take another.
          if (attempt === 0 && isClosedPoolError(err)) {
            if (entries.get(id) === conn) entries.delete(id)
            continue
          }
          throw upstreamFailure(id, err, { timeoutMs: conn.adapter.timeoutMs, maxBytes: MAX_UPSTREAM_RESPONSE_BYTES })
        }
        if (!isUpstreamSuccess(answer.status)) throw upstreamStatusError(id, answer)
        return answer
      }
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
      const pools = [...entries.values()].map(async (entry) => { await entry.pool.close() })
      entries.clear()
      await Promise.all(pools)
    }
  }
}

/**
 * Collects one upstream answer in memory, under a deadline that covers the whole exchange (body
 * included) and holds to the millisecond, unlike undici's own header/body timers that tick about
 * once a second. A plain timer and undici's abort callback do this without an AbortSignal per
 * call and without a body stream: both cost measurable CPU and garbage on the relay's hot path.
 */
class BufferedExchange implements Dispatcher.DispatchHandler {
  #abort: ((err?: Error) => void) | undefined
  #timedOut: Error | undefined
  #settled = false
  readonly #timer: NodeJS.Timeout
  #status = 0
  #contentType: string | undefined
  readonly #chunks: Buffer[] = []

  constructor (
    private readonly resolve: (answer: UpstreamAnswer) => void,
    private readonly reject: (err: unknown) => void,
    timeoutMs: number
  ) {
    this.#timer = setTimeout(() => {
      // Named like AbortSignal.timeout()'s reason, which lib/orchestrator/upstream.ts maps to 504.
      this.#timedOut = new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')
      this.#fail(this.#timedOut)
      this.#abort?.(this.#timedOut)
    }, timeoutMs)
  }

  onConnect (abort: (err?: Error) => void): void {
    // A call that waited for a free socket past its deadline is dropped before it is written.
    if (this.#timedOut !== undefined) abort(this.#timedOut)
    else this.#abort = abort
  }

  onHeaders (statusCode: number, rawHeaders: Buffer[]): boolean {
    // Called again after a 1xx: the last call is the answer.
    this.#status = statusCode
    this.#contentType = undefined
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      if ((rawHeaders[i] as Buffer).toString('latin1').toLowerCase() === 'content-type') {
        this.#contentType = (rawHeaders[i + 1] as Buffer).toString('latin1')
      }
    }
    return true
  }

  onData (chunk: Buffer): boolean {
    this.#chunks.push(chunk)
    return true
  }

  // undici never completes a request it aborted, so this runs only while unsettled.
  onComplete (): void {
    this.#settled = true
    clearTimeout(this.#timer)
    // Most documents arrive in one chunk, which is then used as it is rather than copied.
    const body = this.#chunks.length === 1 ? this.#chunks[0] as Buffer : Buffer.concat(this.#chunks)
    this.resolve({ status: this.#status, contentType: this.#contentType, body })
  }

  onError (err: Error): void {
    this.#fail(err)
  }

  #fail (err: unknown): void {
    if (this.#settled) return
    this.#settled = true
    clearTimeout(this.#timer)
    this.reject(err)
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
    connections: fastify.config.ORCHESTRATOR_POOL_CONNECTIONS
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
