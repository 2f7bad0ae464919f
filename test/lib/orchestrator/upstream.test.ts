import t from 'tap'
import { HttpError, toErrorBody } from '../../../lib/http/errors.js'
import {
  decodeUpstreamBody, isClosedPoolError, isUpstreamSuccess, nsoErrorMessage, readJson, upstreamFailure, upstreamStatusError
} from '../../../lib/orchestrator/upstream.js'

// NSO 5.3's 401: the legacy `errors` member, a tag and no message.
const RECORDED_401 = { errors: { error: [{ 'error-tag': 'access-denied', 'error-type': 'protocol' }] } }

const limits = { timeoutMs: 500, maxBytes: 1024 }

t.test('decodeUpstreamBody: JSON parsed, other types as text, empty as nothing', async (t) => {
  t.same(decodeUpstreamBody('application/yang-data+json', Buffer.from('{"a":[1]}')), { a: [1] })
  t.same(decodeUpstreamBody('application/vnd.yang.collection+json; charset=utf-8', Buffer.from('[1,2]')), [1, 2])
  t.equal(decodeUpstreamBody('application/yang-data+xml', Buffer.from('<a>é</a>')), '<a>é</a>')
  t.equal(decodeUpstreamBody(undefined, Buffer.from('plain')), 'plain')
  t.equal(decodeUpstreamBody('application/json', Buffer.from('{broken')), '{broken', 'claims JSON, is not: text')
  t.equal(decodeUpstreamBody('application/json', Buffer.alloc(0)), undefined)
  t.equal(decodeUpstreamBody('application/json', Buffer.from('null')), null)
})

t.test('only 2xx is a success', async (t) => {
  for (const status of [200, 201, 204, 299]) t.equal(isUpstreamSuccess(status), true, String(status))
  for (const status of [100, 199, 301, 304, 400, 404, 409, 500, 503]) t.equal(isUpstreamSuccess(status), false, String(status))
})

t.test('an upstream error status is a 502 carrying its status and body untouched', async (t) => {
  const errors = { 'ietf-restconf:errors': { error: [{ 'error-type': 'application', 'error-tag': 'data-exists', 'error-message': 'object already exists' }] } }
  const err = upstreamStatusError('nso', { status: 409, contentType: 'application/yang-data+json', body: Buffer.from(JSON.stringify(errors)) })
  t.ok(err instanceof HttpError)
  t.same(toErrorBody(err), {
    statusCode: 502,
    error: 'Bad Gateway',
    message: 'Orchestrator adapter "nso" answered 409 Conflict',
    code: 'UPSTREAM_ERROR',
    upstream: { status: 409, body: errors }
  })
  const xml = upstreamStatusError('nso', { status: 500, contentType: 'text/xml', body: Buffer.from('<errors/>') })
  t.same(toErrorBody(xml).upstream, { status: 500, body: '<errors/>' })
  const empty = upstreamStatusError('nso', { status: 599, contentType: undefined, body: Buffer.alloc(0) })
  t.same(toErrorBody(empty).upstream, { status: 599, body: null })
  t.equal(empty.message, 'Orchestrator adapter "nso" answered 599')
})

t.test('failures: deadline 504, too large 502, anything else unreachable 502', async (t) => {
  const timeout = upstreamFailure('nso', new DOMException('The operation was aborted due to timeout', 'TimeoutError'), limits)
  t.match(toErrorBody(timeout), { statusCode: 504, code: 'UPSTREAM_TIMEOUT', message: 'Orchestrator adapter "nso" did not answer within 500 ms' })
  for (const code of ['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']) {
    t.equal(upstreamFailure('nso', Object.assign(new Error('x'), { code }), limits).statusCode, 504, code)
  }
  const large = upstreamFailure('nso', Object.assign(new Error('too big'), { code: 'UND_ERR_RES_EXCEEDED_MAX_SIZE' }), limits)
  t.match(toErrorBody(large), { statusCode: 502, code: 'UPSTREAM_RESPONSE_TOO_LARGE', message: /more than 1024 bytes/ })
  const refused = upstreamFailure('nso', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }), limits)
  t.match(toErrorBody(refused), { statusCode: 502, code: 'UPSTREAM_UNREACHABLE', message: 'Could not reach orchestrator adapter "nso" (connect ECONNREFUSED 127.0.0.1:9)' })
  const reset = upstreamFailure('nso', Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }), limits)
  t.equal(reset.message, 'Could not reach orchestrator adapter "nso" (UND_ERR_SOCKET: other side closed)')
  t.equal(upstreamFailure('nso', 'weird', limits).message, 'Could not reach orchestrator adapter "nso" (weird)')
  t.equal(upstreamFailure('nso', new Error('plain'), limits).cause instanceof Error, true, 'keeps the cause for the log')
})

t.test('a closed or destroyed pool is recognised', async (t) => {
  t.equal(isClosedPoolError(Object.assign(new Error('closed'), { code: 'UND_ERR_CLOSED' })), true)
  t.equal(isClosedPoolError(Object.assign(new Error('destroyed'), { code: 'UND_ERR_DESTROYED' })), true)
  t.equal(isClosedPoolError(Object.assign(new Error('x'), { code: 'ECONNRESET' })), false)
  t.equal(isClosedPoolError(null), false)
})

t.test('emptyJsonType and bodiless answers', async (t) => {
  const { emptyJsonType, isBodilessAnswer, upstreamFailure } = await import('../../../lib/orchestrator/upstream.js')
  t.equal(emptyJsonType('application/yang-data+xml', 'application/yang-data+json'), 'application/yang-data+json')
  t.equal(emptyJsonType('application/json', 'text/html'), 'application/json')
  t.equal(emptyJsonType('application/xml', undefined), undefined)
  t.ok(isBodilessAnswer(204, undefined))
  t.ok(isBodilessAnswer(201, 0))
  t.notOk(isBodilessAnswer(201, undefined))
  const timedOut = upstreamFailure('nso', new DOMException('late', 'TimeoutError'), { timeoutMs: 5, maxBytes: 1 }, 200)
  t.match(timedOut, { code: 'UPSTREAM_TIMEOUT', details: { nsoStatus: 200 } })
  t.match(upstreamFailure('nso', new Error('socket closed'), { timeoutMs: 5, maxBytes: 1 }, 599),
    { code: 'UPSTREAM_ANSWER_INTERRUPTED', message: /answered 599, then/, details: { nsoStatus: 599 } })
})

t.test('readJson: bodiless and non-JSON answers are no value; broken JSON says why', async (t) => {
  t.same(readJson('application/yang-data+json', Buffer.from(JSON.stringify(RECORDED_401))), { value: RECORDED_401 })
  t.same(readJson('text/html', Buffer.alloc(0)), { value: undefined })
  t.same(readJson('text/html; charset=UTF-8', Buffer.from('<html/>')), { value: undefined })
  t.match(readJson('application/yang-data+json', Buffer.from('{"a":')), { invalid: String })
})

t.test('NSO\'s words in an error answer, in both dialects', async (t) => {
  t.equal(nsoErrorMessage({ 'ietf-restconf:errors': { error: [{ 'error-type': 'application', 'error-tag': 'invalid-value', 'error-message': 'uri keypath not found' }] } }), 'uri keypath not found')
  t.equal(nsoErrorMessage(RECORDED_401), 'access-denied', '5.3: the tag when there is no message')
  t.equal(nsoErrorMessage({ errors: { error: [{ 'error-message': 'a' }, { 'error-message': 'b' }] } }), 'a; b')
  t.equal(nsoErrorMessage(null), undefined, '5.3\'s bodiless 404')
  t.equal(nsoErrorMessage(' <html>bad gateway</html> '), '<html>bad gateway</html>')
  t.equal(nsoErrorMessage(''), undefined)
})
