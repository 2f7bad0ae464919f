// The answers every Git route shares with the rest of the service, as the OpenAPI document
// declares them (every exchange here is checked against it by the test app): failed logins
// throttled with 429 and Retry-After, a missing login with 401 and its challenge.
import t from 'tap'
import { basic, buildTestApp, createUser } from '../../helper.js'

const PROJECT = '/git/GitHub/repos/netops%2Fsite/branches/main/projects/site.json'

t.test('failed logins on the Git routes are throttled: 429 with Retry-After, as documented', async (t) => {
  const app = await buildTestApp(t, { database: 'any', env: { LOGIN_FAILURES_MAX: '2' } })
  await createUser(app, { username: 'gitter', password: 'the-right-password' })
  const from = { remoteAddress: '10.7.0.1' }
  // Each guess a new one: a client retrying the same old password is told 401, never throttled.
  const wrong = (i: number) => ({ authorization: basic('gitter', `wrong-guess-${i}`) })
  const statuses: number[] = []
  for (const [i, url] of [PROJECT, '/git/GitHub/repos/netops%2Fsite/branches', PROJECT].entries()) {
    statuses.push((await app.inject({ url, headers: wrong(i), ...from })).statusCode)
  }
  t.same(statuses, [401, 401, 429], 'two failures, then refused')
  const refused = await app.inject({ method: 'PUT', url: PROJECT, headers: wrong(9), payload: { project: {} }, ...from })
  t.equal(refused.statusCode, 429)
  t.match(refused.headers['retry-after'], /^\d+$/)
  t.match(refused.json(), { statusCode: 429, error: 'Too Many Requests' })
  const anonymous = await app.inject({ url: PROJECT, ...from })
  t.equal(anonymous.statusCode, 401)
  t.match(anonymous.headers['www-authenticate'], /^Basic realm=/)
})
