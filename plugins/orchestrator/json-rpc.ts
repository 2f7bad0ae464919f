// The JSON-RPC client beside the RESTCONF one: a session on one adapter, over the same pool,
// deadline, queue, size bound, error shapes and spans (each call goes through client.ts's `send`).
// Logged in with the adapter's credentials, logged out however the work ends.
import type { Caller } from '../../lib/orchestrator/call-queue.js'
import {
  JSON_RPC_MEDIA_TYPE, JSON_RPC_PATH, jsonRpcError, jsonRpcRequest, jsonRpcResult, sessionCookie, transactionHandle
} from '../../lib/orchestrator/json-rpc.js'
import { OPERATION_ANSWER_MAX_BYTES, type OrchestratorClient, type UpstreamRequest, type WholeAnswer } from './client.js'

/** What a piece of work may do in a session. */
export interface JsonRpcSession {
  /** Calls `method` with `params` in the session: its `result`, or a 502 for a JSON-RPC error. */
  call: (method: string, params: Record<string, unknown>) => Promise<unknown>
  /** Opens a transaction (`new_trans`) and answers its handle. */
  newTransaction: (mode: 'read' | 'read_write') => Promise<number>
}

export interface SessionOptions {
  adapterId: string
  credentials: { user: string, passwd: string }
  send: (request: UpstreamRequest) => Promise<WholeAnswer>
  /** Hears NSO's X-Cisco-NSO-Trace-ID of each answer that carries one (for the audit event). */
  onTraceId?: (traceId: string) => void
}

export async function withJsonRpcSession<T> (options: SessionOptions, work: (session: JsonRpcSession) => Promise<T>): Promise<T> {
  const { adapterId, send } = options
  let next = 1
  // Set once logged in; every later call carries it.
  const state: { cookie?: string } = {}

  async function post (method: string, params: Record<string, unknown>): Promise<WholeAnswer> {
    const answer = await send({
      method: 'POST',
      path: JSON_RPC_PATH,
      accept: JSON_RPC_MEDIA_TYPE,
      body: { text: jsonRpcRequest(next++, method, params), contentType: JSON_RPC_MEDIA_TYPE },
      rpcMethod: method,
      ...(state.cookie === undefined ? {} : { cookie: state.cookie })
    })
    if (answer.traceId !== undefined) options.onTraceId?.(answer.traceId)
    return answer
  }

  const call = async (method: string, params: Record<string, unknown>): Promise<unknown> =>
    jsonRpcResult(adapterId, method, await post(method, params))

  const login = await post('login', { user: options.credentials.user, passwd: options.credentials.passwd })
  jsonRpcResult(adapterId, 'login', login)
  const cookie = sessionCookie(login.setCookie)
  if (cookie === undefined) throw jsonRpcError(adapterId, 'login', { message: 'a login answer without a session cookie' }, login.status, login.traceId)
  state.cookie = cookie
  try {
    return await work({
      call,
      newTransaction: async (mode) => transactionHandle(adapterId, await call('new_trans', { mode }))
    })
  } finally {
    // Also after an error: NSO keeps a session (and its transactions) until it times out otherwise.
    // A failed logout does not hide the work's own outcome.
    await call('logout', {}).catch(() => {})
  }
}

/** The JSON-RPC client of the typed operations. */
export interface JsonRpcClient {
  /**
   * Runs `work` in a JSON-RPC session on adapter `id`, logged in with the adapter's credentials
   * and logged out however `work` ends.
   */
  session: <T>(id: string, work: (session: JsonRpcSession) => Promise<T>, options?: { caller?: Caller, onTraceId?: (traceId: string) => void }) => Promise<T>
}

export function jsonRpcClient (http: OrchestratorClient): JsonRpcClient {
  return {
    async session (id, work, options = {}) {
      const { adapter } = await http.pools.connection(id)
      return await withJsonRpcSession({
        adapterId: id,
        credentials: { user: adapter.username, passwd: adapter.password },
        // A logout goes even when the caller has left: NSO would keep the session until it times out.
        send: async (request) => await http.send(id, request, {
          maxBytes: OPERATION_ANSWER_MAX_BYTES,
          ...(options.caller === undefined || request.rpcMethod === 'logout' ? {} : { caller: options.caller })
        }),
        ...(options.onTraceId === undefined ? {} : { onTraceId: options.onTraceId })
      }, work)
    }
  }
}
