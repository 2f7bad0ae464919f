import t from 'tap'
import Fastify from 'fastify'
import errorHandler from '../../../plugins/core/error-handler.js'
import { HttpError } from '../../../lib/http/errors.js'
import { adminAuth, buildTestApp } from '../../helper.js'

t.test('one error shape for every failure of the service', async (t) => {
  const app = await buildTestApp(t, { database: 'any', env: { BODY_LIMIT: '2048' } })

  const malformed = await app.inject({
    method: 'POST', url: '/users', headers: { authorization: adminAuth, 'content-type': 'application/json' }, payload: '{"username": '
  })
  t.equal(malformed.statusCode, 400)
  t.match(malformed.json(), { statusCode: 400, error: 'Bad Request' })

  const large = await app.inject({
    method: 'POST', url: '/users', headers: { authorization: adminAuth }, payload: { username: 'big', password: 'x'.repeat(4096) }
  })
  t.equal(large.statusCode, 413)
  t.match(large.json(), { statusCode: 413, error: 'Payload Too Large' })

  const notJson = await app.inject({
    method: 'POST', url: '/users', headers: { authorization: adminAuth, 'content-type': 'text/plain' }, payload: 'hello'
  })
  t.equal(notJson.statusCode, 415)
  t.match(notJson.json(), { statusCode: 415 })

  const unknown = await app.inject({ url: '/no/such/route?x=1' })
  t.equal(unknown.statusCode, 404)
  t.same(unknown.json(), { statusCode: 404, error: 'Not Found', message: 'Route GET:/no/such/route not found', code: 'ROUTE_NOT_FOUND' })

  const badUrl = await app.inject({ url: '/users/%zz-secret-looking', headers: { authorization: adminAuth } })
  t.equal(badUrl.statusCode, 400)
  t.match(badUrl.json(), { statusCode: 400, error: 'Bad Request', code: 'FST_ERR_BAD_URL' })
  t.notMatch(badUrl.body, /secret-looking/, 'the URL is not echoed')
  const longUrl = await app.inject({ url: `/users/${'x'.repeat(3000)}`, headers: { authorization: adminAuth } })
  t.equal(longUrl.statusCode, 414)
  t.match(longUrl.json(), { statusCode: 414, error: 'URI Too Long', code: 'FST_ERR_MAX_PARAM_LENGTH' })
  t.ok(longUrl.body.length < 300, 'the URL is not echoed')

  const wrongType = await app.inject({
    method: 'POST', url: '/users', headers: { authorization: adminAuth }, payload: { username: 'ann', password: 'long-enough', disabled: 'true' }
  })
  t.equal(wrongType.statusCode, 400, 'no coercion of body types')
  t.match(wrongType.json().message, /disabled/)
})

t.test('a 500 never shows internals; deliberate errors keep their message', async (t) => {
  const app = Fastify()
  await app.register(errorHandler)
  app.get('/bug', async () => { throw new TypeError('secret at /srv/app/internal.js:12') })
  app.get('/plain-500', async () => { throw Object.assign(new Error('db password is hunter2'), { statusCode: 500 }) })
  app.get('/gateway', async () => { throw new HttpError(502, 'GitHub did not answer', { details: { upstream: { status: 500 } } }) })
  const bug = await app.inject({ url: '/bug' })
  t.equal(bug.statusCode, 500)
  t.same(bug.json(), { statusCode: 500, error: 'Internal Server Error', message: 'Internal Server Error' })
  const plain = await app.inject({ url: '/plain-500' })
  t.notMatch(plain.body, /hunter2/)
  const gateway = await app.inject({ url: '/gateway' })
  t.same(gateway.json(), { statusCode: 502, error: 'Bad Gateway', message: 'GitHub did not answer', upstream: { status: 500 } })
})
