import t from 'tap'
import { adminAuth, basic, buildTestApp, createUser, testDatabases } from '../helper.js'
import { hashPassword } from '../../lib/auth/passwords.js'

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
        t.match(response.json(), { statusCode: 401, error: 'Unauthorized' })
      }
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
  const app = await buildTestApp(t, { env: { AUTH_CACHE_TTL_MS: '0' } })
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

t.test('concurrent requests with one new credential share a single password check', async (t) => {
  const app = await buildTestApp(t)
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

t.test('a client that keeps calling has its credentials re-verified beside its requests, never waiting', async (t) => {
  const ttl = 4000
  const app = await buildTestApp(t, { env: { AUTH_CACHE_TTL_MS: String(ttl) } })
  const auth = await createUser(app, { username: 'steady', roles: ['designer'] })
  // A slow users table: a request that had to check the password would take this long at least.
  const slowness = 600
  let lookups = 0
  const findForLogin = app.usersRepository.findForLogin.bind(app.usersRepository)
  const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }
  app.usersRepository.findForLogin = async (username) => { lookups++; await sleep(slowness); return await findForLogin(username) }
  const call = async (): Promise<{ status: number, ms: number }> => {
    const started = performance.now()
    const response = await app.inject({ url: route, headers: { authorization: auth } })
    return { status: response.statusCode, ms: performance.now() - started }
  }

  t.equal((await call()).status, 200)
  t.equal(lookups, 1, 'the first request verifies')
  await sleep(ttl * 0.6)
  const halfway = await call()
  t.equal(halfway.status, 200, 'past half of the entry\'s life: answered from the cache')
  t.ok(halfway.ms < slowness, `without waiting (${Math.round(halfway.ms)} ms)`)
  t.equal(lookups, 2, 'and verified again beside it')
  await sleep(ttl * 0.45)
  const after = await call()
  t.equal(after.status, 200, 'past the first entry\'s end')
  t.ok(after.ms < slowness, `the re-verified entry answers at once (${Math.round(after.ms)} ms)`)
  t.equal(lookups, 2, 'no password check for it')
})

// Changed behind the service's back (another instance, say): this one learns it on re-verification.
const changesElsewhere: Array<[string, (app: Awaited<ReturnType<typeof buildTestApp>>, username: string) => Promise<unknown>]> = [
  ['the user disabled', async (app, username) => await app.db.query('UPDATE users SET disabled = true WHERE username = $1', [username])],
  ['the password set to another one', async (app, username) =>
    await app.db.query('UPDATE users SET password_hash = $2 WHERE username = $1', [username, await hashPassword('another-password-entirely')])]
]
for (const [change, apply] of changesElsewhere) {
  t.test(`a re-verification that fails drops the remembered credential before its end: ${change}`, async (t) => {
    const ttl = 3000
    const app = await buildTestApp(t, { env: { AUTH_CACHE_TTL_MS: String(ttl) } })
    const auth = await createUser(app, { username: 'leaver' })
    const call = async (): Promise<number> => (await app.inject({ url: route, headers: { authorization: auth } })).statusCode
    const remembered = Date.now()
    t.equal(await call(), 200)
    await apply(app, 'leaver')
    await new Promise((resolve) => setTimeout(resolve, ttl * 0.6))
    t.equal(await call(), 200, 'still remembered')
    let status = 200
    while (status === 200 && Date.now() - remembered < ttl) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      status = await call()
    }
    t.equal(status, 401, 'refused once the background check found the change')
    t.ok(Date.now() - remembered < ttl, 'before the remembered entry would have expired')
  })
}

t.test('a password set again to the same value is checked in full in the background, and the credential kept', async (t) => {
  const ttl = 3000
  const app = await buildTestApp(t, { env: { AUTH_CACHE_TTL_MS: String(ttl) } })
  const auth = await createUser(app, { username: 'rehashed', password: 'the-same-password' })
  let lookups = 0
  const findForLogin = app.usersRepository.findForLogin.bind(app.usersRepository)
  app.usersRepository.findForLogin = async (username) => { lookups++; return await findForLogin(username) }
  const call = async (): Promise<number> => (await app.inject({ url: route, headers: { authorization: auth } })).statusCode
  t.equal(await call(), 200)
  // A new salt: the stored hash differs, the password still matches it.
  await app.db.query("UPDATE users SET password_hash = $1 WHERE username = 'rehashed'", [await hashPassword('the-same-password')])
  await new Promise((resolve) => setTimeout(resolve, ttl * 0.6))
  t.equal(await call(), 200, 'answered from the cache')
  t.equal(lookups, 2, 'the row read again beside it, once: the password is checked against the hash read')
  // From here a password check would wait: an answer at once comes from the re-verified entry.
  const slowness = 600
  app.usersRepository.findForLogin = async (username) => {
    lookups++
    await new Promise((resolve) => setTimeout(resolve, slowness))
    return await findForLogin(username)
  }
  await new Promise((resolve) => setTimeout(resolve, ttl * 0.5))
  const started = performance.now()
  t.equal(await call(), 200, 'past the first entry\'s end')
  const ms = performance.now() - started
  t.ok(ms < slowness, `kept: answered from the cache without a password check (${Math.round(ms)} ms)`)
})
