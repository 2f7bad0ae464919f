import t from 'tap'
import { HttpError, toErrorBody } from '../../../lib/http/errors.js'
import { InvalidCredentials, LastAdmin, UserNotFound, loginBusy, oauthErrorName, OAuthInvalidClient, RoleRequired, tooManyFailedLogins } from '../../../lib/auth/errors.js'
import { retryAfterOf } from '../../../lib/http/errors.js'

t.test('the errors of logging in and users answer in the one error shape', async (t) => {
  t.same(toErrorBody(new InvalidCredentials()), { statusCode: 401, error: 'Unauthorized', message: 'Missing or invalid credentials', code: 'INVALID_CREDENTIALS' })
  t.match(toErrorBody(new RoleRequired('admin, designer')), { statusCode: 403, message: 'This operation needs one of the roles: admin, designer', code: 'ROLE_REQUIRED' })
  t.match(toErrorBody(new UserNotFound('ann')), { statusCode: 404, message: 'User "ann" not found' })
  t.match(toErrorBody(new LastAdmin()), { statusCode: 409, code: 'LAST_ADMIN' })
  t.ok(new LastAdmin() instanceof HttpError)
})

t.test('a throttled or busy login says when to retry, in the body and for Retry-After', async (t) => {
  const throttled = tooManyFailedLogins(7)
  t.same(toErrorBody(throttled), { statusCode: 429, error: 'Too Many Requests', message: 'Too many failed logins; retry in 7 s', code: 'TOO_MANY_FAILED_LOGINS', retryAfter: 7 })
  t.equal(retryAfterOf(throttled), 7)
  t.match(toErrorBody(loginBusy()), { statusCode: 503, code: 'LOGIN_BUSY', retryAfter: 1 })
  t.equal(retryAfterOf(new Error('x')), undefined)
  t.equal(retryAfterOf(new InvalidCredentials()), undefined)
})

t.test('the token endpoint\'s errors name their RFC 6749 error; no other error does', async (t) => {
  t.equal(oauthErrorName(new OAuthInvalidClient()), 'invalid_client')
  t.equal(oauthErrorName(new InvalidCredentials()), undefined)
  t.equal(oauthErrorName(null), undefined)
})
