// NSO's JSON-RPC documents and answers, as the NSO guide gives them.
import t from 'tap'
import { jsonRpcRequest, jsonRpcResult, sessionCookie, transactionHandle } from '../../../lib/orchestrator/json-rpc.js'

const answer = (body: unknown, traceId?: string) => ({ status: 200, body: Buffer.from(JSON.stringify(body)), ...(traceId === undefined ? {} : { traceId }) })

t.test('a request document', async (t) => {
  t.same(JSON.parse(jsonRpcRequest(3, 'new_trans', { mode: 'read' })), { jsonrpc: '2.0', id: 3, method: 'new_trans', params: { mode: 'read' } })
})

t.test('the session cookie of a login', async (t) => {
  t.equal(sessionCookie(['sessionid_8080=abc123; Path=/; HttpOnly']), 'sessionid_8080=abc123')
  t.equal(sessionCookie(['other=1', 'sessionid_443=x; Secure']), 'sessionid_443=x')
  t.equal(sessionCookie(['other=1']), undefined)
  t.equal(sessionCookie(undefined), undefined)
})

t.test('a result is the result; an error with HTTP 200 is a 502 carrying NSO\'s error object', async (t) => {
  t.same(jsonRpcResult('nso', 'new_trans', answer({ jsonrpc: '2.0', id: 1, result: { th: 2 } })), { th: 2 })
  t.equal(transactionHandle('nso', { th: 2 }), 2)
  t.equal(jsonRpcResult('nso', 'logout', answer({ jsonrpc: '2.0', id: 1, result: null })), null)
  // The guide's example error.
  const error = { code: -32601, type: 'rpc.request.method.not_found', message: 'Method not found' }
  try {
    jsonRpcResult('nso', 'subtract', answer({ jsonrpc: '2.0', id: 1, error }, 'abc'))
    t.fail('an error is never a success')
  } catch (err) {
    t.match(err, { statusCode: 502, code: 'UPSTREAM_ERROR', message: 'Orchestrator adapter "nso" answered 200 with a JSON-RPC error to subtract (rpc.request.method.not_found: Method not found)' })
    t.same((err as { details: unknown }).details, { upstream: { status: 200, body: { error }, traceId: 'abc' } })
    t.notOk(Object.keys(err as object).includes('details'), 'kept out of logged fields')
  }
  t.throws(() => jsonRpcResult('nso', 'login', answer({ jsonrpc: '2.0', id: 1 })), { code: 'UPSTREAM_ERROR' })
  t.throws(() => jsonRpcResult('nso', 'login', { status: 200, body: Buffer.from('<html>') }), { code: 'UPSTREAM_INVALID_JSON' })
  t.throws(() => jsonRpcResult('nso', 'login', answer([1])), { code: 'UPSTREAM_INVALID_JSON' })
  t.throws(() => transactionHandle('nso', {}), { code: 'UPSTREAM_ERROR' })
})
