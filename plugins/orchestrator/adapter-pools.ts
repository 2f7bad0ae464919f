// The adapter registry of the orchestrator clients: each adapter's settings read from its row and
// cached, one keep-alive undici Pool per adapter with its call queue, pools rebuilt when a row
// changes and closed when idle. The protocol clients (client.ts: RESTCONF, json-rpc.ts: JSON-RPC)
// take a connection from here for each call.
import type { Tracer } from '@opentelemetry/api'
import { Pool } from 'undici'
import { basicAuthorization } from '../../lib/auth/basic-auth-header.js'
import { withDetails } from '../../lib/http/errors.js'
import { splitBaseUrl, type UpstreamBase } from '../../lib/orchestrator/adapter.js'
import { CallQueue, CallQueueRefusal, type Caller, type Release } from '../../lib/orchestrator/call-queue.js'
import { AdapterNotFound, RelayCallerGone, RelayQueueFull, RelayQueueTimeout, ShuttingDown } from '../../lib/orchestrator/errors.js'
import type { RelayAdapter } from './adapters-repository.js'

// A full configuration read with ?deep can be tens of megabytes; far beyond that is a runaway.
// Answers stream through, so this bounds time and traffic, not memory.
export const MAX_UPSTREAM_RESPONSE_BYTES = 64 * 1024 * 1024

/** One adapter's settings and the pool its calls go through. */
export interface AdapterConnection {
  readonly adapter: RelayAdapter
  readonly base: UpstreamBase
  /** The adapter's own credentials, as an Authorization header value. */
  readonly authorization: string
  readonly pool: Pool
  fetchedAt: number
  /** When a call last started or ended (for idle closing). */
  usedAt: number
  /** Calls under way. */
  active: number
  /** Admits at most `connections` calls at once; the others wait their turn here. */
  readonly queue: CallQueue
}

export interface AdapterPoolsOptions {
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

export interface PoolStats { adapter: string, connected: number, free: number, pending: number, running: number, queued: number }

/** The registry the protocol clients share. */
export interface AdapterPools {
  /** Adapter `id`'s connection (404 ADAPTER_NOT_FOUND when there is none; 503 once closed). */
  connection: (id: string) => Promise<AdapterConnection>
  /**
   * Waits for a free socket of the connection's pool (429/503 when the line is full or the wait
   * too long; dropped when `caller` leaves first). The call counts as under way until `release`.
   */
  admit: (id: string, conn: AdapterConnection, caller: Caller | undefined) => Promise<Release>
  /** The connection's pool was found closed under a call (nothing was sent): it is dropped. */
  discard: (id: string, conn: AdapterConnection) => void
  /** Drops adapter `id` (changed or deleted here): its pool closes once its requests are done. */
  forget: (id: string) => void
  /** The live pool of adapter `id`, if one was built (for diagnostics and tests). */
  poolOf: (id: string) => Pool | undefined
  /** Each live pool's connection counts and calls waiting for a connection, for metrics. */
  poolStats: () => PoolStats[]
  close: () => Promise<void>
  readonly tracer: Tracer | undefined
  readonly now: () => number
}

/**
 * One keep-alive undici Pool per adapter. Adapter rows are cached for `cacheTtlMs`, so a call
 * costs no database round trip; when a re-read row has another revision (changed or re-created,
 * here or on another instance) the pool is rebuilt. `forget` drops an adapter changed here at once.
 * A pool without calls for `poolIdleMs` is closed (its sockets with it) and built again on use.
 */
export function adapterPools (options: AdapterPoolsOptions): AdapterPools {
  const { findAdapter, cacheTtlMs, connections } = options
  const queueMax = options.queueMax ?? 100
  const queueWaitMs = options.queueWaitMs ?? 30_000
  // A retry after the line's longest wait meets a line of calls that all came after it.
  const retryAfter = Math.max(1, Math.ceil(queueWaitMs / 1000))
  const poolIdleMs = options.poolIdleMs ?? 0
  const now = options.now ?? Date.now
  const entries = new Map<string, AdapterConnection>()
  const loading = new Map<string, Promise<AdapterConnection | undefined>>()
  // Bumped by forget(): a read that overlapped a local change is done again.
  let epoch = 0
  let closed = false

  // close() lets requests already in the pool finish; new ones get UND_ERR_CLOSED (and retry).
  const retire = (entry: AdapterConnection): void => { entry.pool.close().catch(() => {}) }

  function build (adapter: RelayAdapter): AdapterConnection {
    const base = splitBaseUrl(adapter.baseUrl)
    // undici's own timers are a backstop only: they tick about once a second, so the deadline
    // that holds is the timer of each call (exchange.ts).
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

  async function load (id: string): Promise<AdapterConnection | undefined> {
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

  async function connection (id: string): Promise<AdapterConnection> {
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
    const loaded = await pending
    if (loaded === undefined) throw new AdapterNotFound(id)
    return loaded
  }

  // Calls past the pool's sockets wait here, not in undici's queue, so that the adapter's deadline
  // starts when a socket is free and bounds the orchestrator's answer only.
  async function admit (id: string, conn: AdapterConnection, caller: Caller | undefined): Promise<Release> {
    let release: Release
    try {
      release = await conn.queue.acquire(caller)
    } catch (err) {
      /* c8 ignore next -- CallQueue refuses with nothing else */
      if (!(err instanceof CallQueueRefusal)) throw err
      if (err.reason === 'gone') throw new RelayCallerGone(id)
      const refusal = err.reason === 'full'
        ? new RelayQueueFull(id, conn.queue.running, conn.queue.waiting)
        : new RelayQueueTimeout(id, queueWaitMs)
      throw withDetails(refusal, { retryAfter })
    }
    conn.active++
    conn.usedAt = now()
    let released = false
    return () => {
      if (released) return
      released = true
      conn.active--
      conn.usedAt = now()
      release()
    }
  }

  return {
    connection,
    admit,
    discard (id, conn) {
      if (entries.get(id) === conn) entries.delete(id)
    },
    forget (id) {
      epoch++
      loading.delete(id)
      const entry = entries.get(id)
      if (entry === undefined) return
      entries.delete(id)
      retire(entry)
    },
    poolOf: (id) => entries.get(id)?.pool,
    poolStats: () => [...entries.entries()].map(([adapter, { pool, queue }]) => {
      const { connected, free, pending, running } = pool.stats
      return { adapter, connected, free, pending, running, queued: queue.waiting }
    }),
    async close () {
      closed = true
      if (sweeper !== undefined) clearInterval(sweeper)
      const pools = [...entries.values()].map(async (entry) => { await entry.pool.close() })
      entries.clear()
      await Promise.all(pools)
    },
    tracer: options.tracer ?? undefined,
    now
  }
}
