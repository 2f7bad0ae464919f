import t from 'tap'
import { adminAuth, basic, buildTestApp, createUser, testDatabases } from '../../helper.js'

const route = '/configuration_manager/ismaintenance'

for (const database of testDatabases) {
  t.test(`Basic auth on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database })

    t.test('missing, malformed or wrong credentials are a 401 with a Basic challenge', async (t) => {
      const headers: Array<Record<string, string>> = [
        {},
        { authorization: 'Bearer abc' },
        { authorization: 'Basic !!!not-base64' },
        { authorization: 'Basic ' + Buffer.from('no-colon').toString('base64') },
        { authorization: basic('admin', 'wrong-password') },
        { authorization: basic('nobody', 'whatever-password') },
        { authorization: 'Basic ' + Buffer.from('admin:\u0000x').toString('base64') }
      ]
      for (const h of headers) {
        const response = await app.inject({ url: route, headers: h })
        t.equal(response.statusCode, 401, JSON.stringify(h))
        t.match(response.headers['www-authenticate'], /^Basic realm="netauto"/)
        if (h.authorization?.startsWith('Bearer') !== true) t.equal(response.headers['www-authenticate'], 'Basic realm="netauto"', 'the challenge, exactly')
        t.same(response.json(), { statusCode: 401, error: 'Unauthorized', message: 'Missing or invalid credentials', code: 'INVALID_CREDENTIALS' })
      }
    })

    t.test('UTF-8 credentials, and blanks around the scheme and credentials, are read', async (t) => {
      const auth = await createUser(app, { username: 'zoe', password: 'pässwörd-中文-ok' })
      t.equal((await app.inject({ url: route, headers: { authorization: auth } })).statusCode, 200)
      const spaced = auth.replace(/^Basic /, ' basic \t ') + ' '
      t.equal((await app.inject({ url: route, headers: { authorization: spaced } })).statusCode, 200)
    })

    t.test('a password with a control character is not Basic credentials (RFC 7617), and logs in with POST /login', async (t) => {
      const password = 'tab\there-password'
      const auth = await createUser(app, { username: 'tabbed', password })
      const before = app.passwordChecks()
      const refused = await app.inject({ url: route, headers: { authorization: auth } })
      t.equal(refused.statusCode, 401)
      t.equal(refused.headers['www-authenticate'], 'Basic realm="netauto"')
      t.equal(app.passwordChecks(), before, 'refused before any password check')
      const login = await app.inject({ method: 'POST', url: '/login', payload: { user: { username: 'tabbed', password } } })
      t.equal(login.statusCode, 200)
    })

    t.test('right credentials pass, again and again (the cached path)', async (t) => {
      for (let i = 0; i < 3; i++) {
        const response = await app.inject({ url: route, headers: { authorization: adminAuth } })
        t.equal(response.statusCode, 200)
        t.equal(response.body, 'false')
      }
    })

    t.test('a wrong role is a 403, any role reads', async (t) => {
      const reader = await createUser(app, { username: 'reader' })
      t.equal((await app.inject({ url: route, headers: { authorization: reader } })).statusCode, 200)
      const forbidden = await app.inject({ url: '/users', headers: { authorization: reader } })
      t.equal(forbidden.statusCode, 403)
      t.equal(forbidden.headers['www-authenticate'], undefined)
    })

    t.test('a user deleted elsewhere is refused once the cache entry is gone', async (t) => {
      const auth = await createUser(app, { username: 'short-lived' })
      t.equal((await app.inject({ url: route, headers: { authorization: auth } })).statusCode, 200)
      await app.db.query("DELETE FROM users WHERE username = 'short-lived'")
      app.forgetCredentials('short-lived')
      t.equal((await app.inject({ url: route, headers: { authorization: auth } })).statusCode, 401)
    })
  })
}

t.test('with the cache off every request verifies the password', async (t) => {
  const app = await buildTestApp(t, { database: 'any', env: { AUTH_CACHE_TTL_MS: '0' } })
  const auth = await createUser(app, { username: 'ann' })
  t.equal((await app.inject({ url: route, headers: { authorization: auth } })).statusCode, 200)
  await app.db.query("UPDATE users SET disabled = true WHERE username = 'ann'")
  t.equal((await app.inject({ url: route, headers: { authorization: auth } })).statusCode, 401, 'the change is seen at once')
})

t.test('a database outage during login is a 503, not a 401', async (t) => {
  const app = await buildTestApp(t)
  const auth = await createUser(app, { username: 'late' })
  await app.db.close()
  const response = await app.inject({ url: route, headers: { authorization: auth } })
  t.equal(response.statusCode, 503)
  t.match(response.json(), { statusCode: 503, code: 'DATABASE_UNAVAILABLE' })
  t.equal(response.headers['www-authenticate'], undefined)
  const ready = await app.inject({ url: '/ready' })
  t.equal(ready.statusCode, 503)
})

t.test('a failure of the password check that is not an outage is a 500, not a 401', async (t) => {
  const app = await buildTestApp(t, { database: 'any', unlistedStatuses: [500] })
  const auth = await createUser(app, { username: 'unlucky' })
  app.usersRepository.findForLogin = async () => { throw new Error('unexpected') }
  const response = await app.inject({ url: route, headers: { authorization: auth } })
  t.equal(response.statusCode, 500)
  t.match(response.json(), { statusCode: 500, error: 'Internal Server Error' })
  t.equal(response.headers['www-authenticate'], undefined)
})

t.test('concurrent requests with one new credential share a single password check', async (t) => {
  const app = await buildTestApp(t, { database: 'any' })
  const auth = await createUser(app, { username: 'burst' })
  const { rows: before } = await app.db.query<{ n: number }>('SELECT count(*)::int AS n FROM users')
  t.equal(before[0]?.n, 2)
  let lookups = 0
  const findForLogin = app.usersRepository.findForLogin.bind(app.usersRepository)
  app.usersRepository.findForLogin = async (username) => { lookups++; return await findForLogin(username) }
  const answers = await Promise.all(Array.from({ length: 20 }, async () =>
    await app.inject({ url: route, headers: { authorization: auth } })))
  t.same(answers.map((a) => a.statusCode), Array(20).fill(200))
  t.equal(lookups, 1, 'one verification for twenty requests')

  const wrong = basic('burst', 'not-the-password')
  const refused = await Promise.all(Array.from({ length: 5 }, async () =>
    await app.inject({ url: route, headers: { authorization: wrong } })))
  for (const r of refused) {
    t.equal(r.statusCode, 401)
    t.match(r.headers['www-authenticate'], /^Basic realm=/, 'every refused waiter gets the challenge')
  }
})
