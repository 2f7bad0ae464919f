import t from 'tap'
import fc from 'fast-check'
import { createHash } from 'node:crypto'
import { ADMIN, adminAuth, buildTestApp, captureLogs, createTestDatabase, createUser, testDatabases } from '../../helper.js'
import { AREA_ROUTES, MAINTENANCE, login, newServiceAccount } from '../../helpers/auth.js'

for (const database of testDatabases) {
  t.test(`sessions on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database })

    t.test('POST /login answers the token as a JSON string and sets it as an HttpOnly, SameSite cookie', async (t) => {
      const response = await app.inject({ method: 'POST', url: '/login', payload: { user: ADMIN } })
      t.equal(response.statusCode, 200)
      const token = response.json<string>()
      t.match(token, /^[A-Za-z0-9_-]{43}$/, '256 random bits, base64url')
      const cookie = String(response.headers['set-cookie'])
      t.match(cookie, new RegExp(`^token=${token};`))
      t.match(cookie, /HttpOnly/)
      t.match(cookie, /SameSite=Strict/)
      t.notMatch(cookie, /Secure/, 'not over plain HTTP')
      const { rows } = await app.db.query<{ token_digest: string }>('SELECT token_digest FROM sessions')
      t.equal(rows.length, 1)
      t.not(rows[0]?.token_digest, token, 'the table keeps a digest, not the token')
      t.notOk(JSON.stringify(rows).includes(token))
    })

    t.test('behind HTTPS (a trusted proxy says so) the cookie is Secure', async (t) => {
      const secure = await buildTestApp(t, { database: 'any', env: { TRUST_PROXY: '127.0.0.1' } })
      const response = await secure.inject({ method: 'POST', url: '/login', headers: { 'x-forwarded-proto': 'https' }, payload: { user: ADMIN } })
      t.equal(response.statusCode, 200)
      t.match(String(response.headers['set-cookie']), /; Secure/)
    })

    t.test('wrong credentials are a 401 in the one error shape; a malformed body a 400 naming the field', async (t) => {
      const wrong = await app.inject({ method: 'POST', url: '/login', payload: { user: { username: 'admin', password: 'not-it' } } })
      t.equal(wrong.statusCode, 401)
      t.match(wrong.json(), { statusCode: 401, error: 'Unauthorized', message: String })
      t.equal(wrong.headers['set-cookie'], undefined)
      const bad = await app.inject({ method: 'POST', url: '/login', payload: { user: { username: 'admin' } } })
      t.equal(bad.statusCode, 400)
      t.match(bad.json().message, /password/)
    })

    t.test('the token works as Bearer, cookie and ?token= on a route of every area', async (t) => {
      const { token } = await login(app)
      for (const url of AREA_ROUTES) {
        const ways = [
          { name: 'bearer', headers: { authorization: `Bearer ${token}` }, url },
          { name: 'cookie', headers: { cookie: `other=1; token=${token}` }, url },
          { name: 'query', headers: {}, url: `${url}?token=${token}` }
        ]
        for (const way of ways) {
          const response = await app.inject({ url: way.url, headers: way.headers })
          t.equal(response.statusCode, 200, `${way.name} ${url}: ${response.body.slice(0, 200)}`)
        }
      }
      const who = await app.inject({ url: `/whoami?token=${token}` })
      t.match(who.json(), { id: 'admin', provenance: 'local', username: 'admin', firstname: 'admin', roles: ['admin'], groups: [], email: null, authenticatedBy: 'query' })
      t.equal((await app.inject({ url: '/whoami', headers: { authorization: `Bearer ${token}` } })).json().authenticatedBy, 'bearer')
      t.equal((await app.inject({ url: '/whoami', headers: { cookie: `token=${token}` } })).json().authenticatedBy, 'cookie')
      t.equal((await app.inject({ url: '/whoami', headers: { authorization: adminAuth } })).json().authenticatedBy, 'basic')
    })

    t.test('a token carries its user\'s roles: a reader is refused admin routes with 403', async (t) => {
      await createUser(app, { username: 'reader', password: 'reader-password', groups: ['ops'], email: 'r@example.com' })
      const { token } = await login(app, 'reader', 'reader-password')
      const bearer = { authorization: `Bearer ${token}` }
      t.equal((await app.inject({ url: '/users', headers: bearer })).statusCode, 403)
      const who = (await app.inject({ url: '/whoami', headers: bearer })).json()
      t.match(who, { username: 'reader', roles: [], groups: [{ id: 'ops', name: 'ops', provenance: 'local' }], email: 'r@example.com', authenticatedBy: 'bearer' })
      t.notOk(who.methods.Authorization?.includes('getAccounts'), 'no admin operation is offered to a reader')
      t.ok(who.methods.Authorization?.includes('putGitCredentials'), 'but its own Git credentials are')
      t.notOk(who.routes.includes('/users'), 'nor an admin path')
    })

    t.test('logout (GET and POST) ends the session; Basic has none to end', async (t) => {
      for (const method of ['GET', 'POST'] as const) {
        const { token } = await login(app)
        const out = await app.inject({ method, url: '/logout', headers: { cookie: `token=${token}` } })
        t.equal(out.statusCode, 200)
        t.same(out.json(), { loggedOut: true })
        t.match(String(out.headers['set-cookie']), /^token=;/, 'the cookie is cleared')
        for (const headers of [{ cookie: `token=${token}` }, { authorization: `Bearer ${token}` }]) {
          const after = await app.inject({ url: MAINTENANCE, headers })
          t.equal(after.statusCode, 401, `${method}: refused after logout`)
        }
      }
      const basicOut = await app.inject({ url: '/logout', headers: { authorization: adminAuth } })
      t.same(basicOut.json(), { loggedOut: false })
    })

    t.test('an expired token is refused', async (t) => {
      const { token } = await login(app)
      const bearer = { authorization: `Bearer ${token}` }
      t.equal((await app.inject({ url: MAINTENANCE, headers: bearer })).statusCode, 200)
      await app.db.query("UPDATE sessions SET expires_at = now() - interval '1 second'")
      // What this instance remembers of it goes with any change of its user (here: none, so forget by hand).
      app.forgetCredentials('admin')
      const refused = await app.inject({ url: MAINTENANCE, headers: bearer })
      t.equal(refused.statusCode, 401)
      t.match(refused.headers['www-authenticate'], /^Basic realm="netauto", Bearer/)
    })

    t.test('a token records its last use', async (t) => {
      const { token } = await login(app)
      await app.db.query("UPDATE sessions SET last_used_at = now() - interval '1 hour', created_at = now() - interval '1 hour'")
      t.equal((await app.inject({ url: MAINTENANCE, headers: { authorization: `Bearer ${token}` } })).statusCode, 200)
      const { rows } = await app.db.query<{ used: boolean, created: boolean }>(
        "SELECT last_used_at > now() - interval '10 minutes' AS used, created_at > now() - interval '10 minutes' AS created FROM sessions WHERE token_digest = $1",
        [createHash('sha256').update(token).digest('hex')])
      t.same(rows, [{ used: true, created: false }])
    })

    t.test('a token seen once is answered without a database round trip while this instance trusts it', async (t) => {
      const { token } = await login(app)
      let finds = 0
      const find = app.sessionsRepository.find.bind(app.sessionsRepository)
      app.sessionsRepository.find = async (digest) => { finds++; return await find(digest) }
      t.teardown(() => { app.sessionsRepository.find = find })
      const started = performance.now()
      for (let i = 0; i < 30; i++) t.equal((await app.inject({ url: MAINTENANCE, headers: { authorization: `Bearer ${token}` } })).statusCode, 200)
      const elapsed = performance.now() - started
      // Read once, then again beside a request once per half of TOKEN_CACHE_TTL_MS (5 s) at most.
      t.ok(finds >= 1 && finds <= 1 + Math.ceil(elapsed / 2500), `${finds} database reads for 30 requests in ${Math.round(elapsed)} ms`)
    })

    t.test('a token never appears in a log line (LOG_LEVEL info)', async (t) => {
      const logs = captureLogs()
      const logged = await buildTestApp(t, { database: await createTestDatabase(t, 'any', { migrated: true }), env: { LOG_LEVEL: 'info' }, logStream: logs })
      const { token } = await login(logged)
      await logged.inject({ url: `${MAINTENANCE}?token=${token}` })
      await logged.inject({ url: `/studio/component-groups?limit=5&token=${token}` })
      await logged.inject({ url: `${MAINTENANCE}?token=${token}x` })
      await logged.inject({ url: MAINTENANCE, headers: { authorization: `Bearer ${token}` } })
      await logged.inject({ url: MAINTENANCE, headers: { cookie: `token=${token}` } })
      await logged.inject({ url: '/logout', headers: { cookie: `token=${token}` } })
      t.ok(logs.lines.length > 5, 'requests were logged')
      t.ok(logs.lines.some((l) => l.includes('/studio/component-groups?limit=5')), 'the rest of the query stays in the log')
      t.same(logs.lines.filter((l) => l.includes(token)), [])
    })

    t.test('hostile tokens, cookies and Authorization headers: never a 5xx, never let in', async (t) => {
      const token = fc.oneof(
        fc.string({ maxLength: 80 }),
        fc.string({ minLength: 43, maxLength: 43, unit: fc.constantFrom(...'ABCxyz019-_'.split('')) }),
        fc.constantFrom('', ' ', '%00', '\u0000', 'a'.repeat(5000), 'Bearer', '=;', '"quoted"')
      )
      const header = fc.oneof(
        token.map((v) => `Bearer ${v}`),
        token.map((v) => `bearer    ${v}   `),
        token.map((v) => `Basic ${v}`),
        fc.string({ maxLength: 200 })
      )
      const printable = (s: string): boolean => /^[\t\x20-\x7e]*$/.test(s)
      await fc.assert(fc.asyncProperty(header, token, token, async (authorization, cookieToken, queryToken) => {
        const requests = [
          printable(authorization) ? { url: MAINTENANCE, headers: { authorization } } : undefined,
          printable(cookieToken) ? { url: MAINTENANCE, headers: { cookie: `token=${cookieToken}` } } : undefined,
          { url: `${MAINTENANCE}?token=${encodeURIComponent(queryToken)}` },
          { url: `${MAINTENANCE}?token=${encodeURIComponent(queryToken)}&token=x` }
        ]
        for (const request of requests) {
          if (request === undefined) continue
          const response = await app.inject(request)
          if (response.statusCode !== 401 && response.statusCode !== 400) throw new Error(`${JSON.stringify(request)} -> ${response.statusCode} ${response.body}`)
        }
      }), { numRuns: 150 })
      t.pass('150 runs of four hostile requests each')
    })

    t.test('DELETE with Content-Type: application/json and no body, by token', async (t) => {
      const { token } = await login(app)
      const client = await newServiceAccount(app, 'admin')
      const response = await app.inject({
        method: 'DELETE',
        url: `/oauth/serviceAccounts/${client.client_id}`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
      })
      t.equal(response.statusCode, 200, response.body)
      t.same(response.json(), { status: 'OK', message: `Service account "${client.client_id}" deleted` })
    })
  })
}
