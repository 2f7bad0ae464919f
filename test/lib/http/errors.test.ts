import t from 'tap'
import { HttpError, isDatabaseUnavailable, toErrorBody } from '../../../lib/http/errors.js'

t.test('a 4xx keeps its message and code', async (t) => {
  const err = Object.assign(new Error('body/name must be string'), { statusCode: 400, code: 'FST_ERR_VALIDATION' })
  t.same(toErrorBody(err), { statusCode: 400, error: 'Bad Request', message: 'body/name must be string', code: 'FST_ERR_VALIDATION' })
})

t.test('a deliberate 5xx keeps its message and details', async (t) => {
  const err = new HttpError(502, 'upstream answered 404', { details: { upstream: { status: 404, body: { a: 1 } } } })
  t.same(toErrorBody(err), { statusCode: 502, error: 'Bad Gateway', message: 'upstream answered 404', upstream: { status: 404, body: { a: 1 } } })
})

t.test('an unexpected error is a 500 that shows nothing of it', async (t) => {
  const body = toErrorBody(new TypeError('cannot read secret of undefined at /srv/app.js:12'))
  t.same(body, { statusCode: 500, error: 'Internal Server Error', message: 'Internal Server Error' })
  t.same(toErrorBody('a string'), { statusCode: 500, error: 'Internal Server Error', message: 'Internal Server Error' })
  t.same(toErrorBody(Object.assign(new Error('x'), { statusCode: 200 })).statusCode, 500)
})

t.test('database outages are 503s without internals', async (t) => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
  const terminated = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })
  t.ok(isDatabaseUnavailable(refused))
  t.ok(isDatabaseUnavailable(terminated))
  t.ok(isDatabaseUnavailable(new Error('Connection terminated unexpectedly')))
  t.notOk(isDatabaseUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' })))
  t.notOk(isDatabaseUnavailable('ECONNREFUSED'))
  const body = toErrorBody(refused)
  t.equal(body.statusCode, 503)
  t.equal(body.code, 'DATABASE_UNAVAILABLE')
  t.notMatch(body.message, /5432/)
})
