import t from 'tap'
import { basic, buildTestApp, createUser, testDatabases, type TestApp } from '../../helper.js'
import { FORM, MAINTENANCE, form, newServiceAccount } from '../../helpers/auth.js'

const MAX = 10
const PARALLEL = 200

const tally = (statuses: number[]): Record<number, number> =>
  statuses.reduce<Record<number, number>>((counts, s) => ({ ...counts, [s]: (counts[s] ?? 0) + 1 }), {})

for (const database of testDatabases) {
  t.test(`login throttling on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database, env: { LOGIN_FAILURES_MAX: String(MAX) } })
    const password = 'the-right-password'
    await createUser(app, { username: 'target', password })
    await createUser(app, { username: 'owner', password })
    // A different client address for each scenario: failures also count per address.
    const from = (n: number) => ({ remoteAddress: `10.0.0.${n}` })

    t.test(`${PARALLEL} parallel wrong Basic guesses: at most ${MAX} password checks`, async (t) => {
      const before = app.passwordChecks()
      const answers = await Promise.all(Array.from({ length: PARALLEL }, async (_, i) =>
        await app.inject({ url: MAINTENANCE, headers: { authorization: basic('target', `guess-${i}`) }, ...from(1) })))
      t.equal(app.passwordChecks() - before, MAX, 'password checks counted')
      t.same(tally(answers.map((a) => a.statusCode)), { 401: MAX, 429: PARALLEL - MAX })
      const refused = answers.find((a) => a.statusCode === 429)
      t.match(refused?.headers['retry-after'], /^\d+$/)
      t.match(refused?.json(), { statusCode: 429, error: 'Too Many Requests' })
    })

    t.test(`${PARALLEL} parallel wrong POST /login guesses: at most ${MAX} password checks`, async (t) => {
      const before = app.passwordChecks()
      const answers = await Promise.all(Array.from({ length: PARALLEL }, async (_, i) =>
        await app.inject({ method: 'POST', url: '/login', payload: { user: { username: 'target', password: `login-guess-${i}` } }, ...from(2) })))
      t.equal(app.passwordChecks() - before, MAX)
      t.same(tally(answers.map((a) => a.statusCode)), { 401: MAX, 429: PARALLEL - MAX })
    })

    t.test(`${PARALLEL} parallel wrong POST /oauth/token secrets: at most ${MAX} checked`, async (t) => {
      const client = await newServiceAccount(app, 'target')
      const answers = await Promise.all(Array.from({ length: PARALLEL }, async (_, i) =>
        await app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: form({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: `guess-${i}` }), ...from(3) })))
      t.same(tally(answers.map((a) => a.statusCode)), { 401: MAX, 429: PARALLEL - MAX })
    })

    t.test('an owner whose password worked lately is not locked out by guesses from its own address', async (t) => {
      t.equal((await app.inject({ url: MAINTENANCE, headers: { authorization: basic('owner', password) }, ...from(4) })).statusCode, 200)
      app.forgetCredentials('owner') // the next request pays a full check again
      for (let i = 0; i < MAX + 5; i++) {
        await app.inject({ method: 'POST', url: '/login', payload: { user: { username: 'owner', password: `guess-${i}` } }, ...from(4) })
      }
      const locked = await app.inject({ method: 'POST', url: '/login', payload: { user: { username: 'owner', password: 'never-tried-before' } }, ...from(4) })
      t.equal(locked.statusCode, 429, 'a new guess is refused')
      const before = app.passwordChecks()
      const right = await app.inject({ method: 'POST', url: '/login', payload: { user: { username: 'owner', password } }, ...from(4) })
      t.equal(right.statusCode, 200, 'the right password goes through')
      t.equal(app.passwordChecks() - before, 1, 'through a full password check')
      const basicRight = await app.inject({ url: MAINTENANCE, headers: { authorization: basic('owner', password) }, ...from(4) })
      t.equal(basicRight.statusCode, 200, 'and as Basic credentials')
    })

    t.test('a forgotten script retrying an old password costs one failure, and its owner logs in', async (t) => {
      await createUser(app, { username: 'scripted', password })
      const old = basic('scripted', 'the-old-password')
      const before = app.passwordChecks()
      for (let i = 0; i < 3 * MAX; i++) {
        const response = await app.inject({ url: MAINTENANCE, headers: { authorization: old }, ...from(5) })
        t.equal(response.statusCode, 401, `retry ${i}: the honest answer, never 429`)
      }
      t.equal(app.passwordChecks() - before, 1, 'the old password was checked once')
      const owner = await app.inject({ method: 'POST', url: '/login', payload: { user: { username: 'scripted', password } }, ...from(5) })
      t.equal(owner.statusCode, 200, 'a right password never seen before still goes through')
    })

    t.test('requests without credentials get their challenge and are never counted', async (t) => {
      await createUser(app, { username: 'patient', password })
      const before = app.passwordChecks()
      for (let i = 0; i < 3 * MAX; i++) {
        const response = await app.inject({ url: MAINTENANCE, ...from(6) })
        t.equal(response.statusCode, 401)
        t.match(response.headers['www-authenticate'], /^Basic realm="netauto"/)
      }
      t.equal(app.passwordChecks(), before, 'no password check')
      const first = await app.inject({ url: MAINTENANCE, headers: { authorization: basic('patient', password) }, ...from(6) })
      t.equal(first.statusCode, 200)
    })

    t.test('failures count per address across usernames: spraying usernames draws 429', async (t) => {
      const answers: number[] = []
      for (let i = 0; i < 25; i++) {
        answers.push((await app.inject({ url: MAINTENANCE, headers: { authorization: basic(`sprayed-${i}`, 'Winter2026!') }, ...from(7) })).statusCode)
      }
      t.same(answers.slice(0, 20), Array(20).fill(401), 'LOGIN_ADDRESS_FAILURES_MAX (20) failures')
      t.same(answers.slice(20), Array(5).fill(429), 'then refused')
      const elsewhere = await app.inject({ url: MAINTENANCE, headers: { authorization: basic('sprayed-99', 'Winter2026!') }, ...from(8) })
      t.equal(elsewhere.statusCode, 401, 'another address is not affected')
    })
  })
}

t.test('a flood of unknown logins waits in a bounded line, and a known login goes first', async (t) => {
  const app: TestApp = await buildTestApp(t, { database: 'any', env: { PASSWORD_CHECK_CONCURRENCY: '1', PASSWORD_CHECK_QUEUE: '4' } })
  const password = 'the-right-password'
  const auth = await createUser(app, { username: 'real', password })
  t.equal((await app.inject({ url: MAINTENANCE, headers: { authorization: auth } })).statusCode, 200)
  app.forgetCredentials('real')
  const before = app.passwordChecks()
  // From many addresses, so that no failure count stops them: only the line does.
  const flood = Array.from({ length: PARALLEL }, async (_, i) => await app.inject({
    url: MAINTENANCE,
    headers: { authorization: basic(`unknown-${i}`, 'guess') },
    remoteAddress: `10.1.${Math.floor(i / 200)}.${i % 200}`
  }))
  const real = await app.inject({ url: MAINTENANCE, headers: { authorization: auth }, remoteAddress: '10.9.9.9' })
  const answers = await Promise.all(flood)
  t.equal(real.statusCode, 200, 'the real login was answered')
  const counts = tally(answers.map((a) => a.statusCode))
  t.equal((counts[401] ?? 0) + (counts[503] ?? 0), PARALLEL, `only 401 and 503: ${JSON.stringify(counts)}`)
  t.ok((counts[503] ?? 0) > 0, 'a full line refuses at once')
  const busy = answers.find((a) => a.statusCode === 503)
  t.equal(busy?.headers['retry-after'], '1')
  t.match(busy?.json(), { statusCode: 503, code: 'LOGIN_BUSY' })
  t.equal(app.passwordChecks() - before, (counts[401] ?? 0) + 1, 'a refused request paid no password check')
})

t.test('a username or client id no one can have is refused without a look-up or a count', async (t) => {
  const app: TestApp = await buildTestApp(t, { database: 'any' })
  const password = 'the-right-password'
  await createUser(app, { username: 'someone', password })
  const users = app.usersRepository
  let lookups = 0
  const findForLogin = users.findForLogin.bind(users)
  users.findForLogin = async (username) => { lookups++; return await findForLogin(username) }
  const from = { remoteAddress: '10.3.0.1' }
  // The address spends its whole budget on usernames of the allowed form.
  for (let i = 0; i < 20; i++) await app.inject({ url: MAINTENANCE, headers: { authorization: basic(`spray-${i}`, 'guess') }, ...from })
  t.equal((await app.inject({ url: MAINTENANCE, headers: { authorization: basic('spray-x', 'guess') }, ...from })).statusCode, 429)
  lookups = 0
  const checks = app.passwordChecks()
  const counters = app.loginGuard.sizes().counters
  const impossible = ['x'.repeat(65), 'with space', 'semi;colon', 'ünïcode', '']
  for (const username of impossible) {
    const viaBasic = await app.inject({ url: MAINTENANCE, headers: { authorization: basic(username, 'guess') }, ...from })
    t.equal(viaBasic.statusCode, 401, `Basic ${JSON.stringify(username.slice(0, 12))}: wrong credentials, not 429`)
    t.match(viaBasic.headers['www-authenticate'], /^Basic realm="netauto"/)
    if (username === '' || username.length > 64) continue // POST /login's schema refuses these with 400
    const viaLogin = await app.inject({ method: 'POST', url: '/login', payload: { user: { username, password: 'guess' } }, ...from })
    t.match(viaLogin.json(), { statusCode: 401, code: 'LOGIN_FAILED' })
  }
  for (const clientId of ['X'.repeat(24), '0'.repeat(23), 'a'.repeat(4000)]) {
    const token = await app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: form({ grant_type: 'client_credentials', client_id: clientId, client_secret: 'guess' }), ...from })
    t.equal(token.statusCode, 401)
    t.equal(token.json().error, 'invalid_client')
  }
  t.equal(lookups, 0, 'no user looked up')
  t.equal(app.passwordChecks(), checks, 'no password checked')
  t.equal(app.loginGuard.sizes().counters, counters, 'nothing counted')
  const owner = await app.inject({ url: MAINTENANCE, headers: { authorization: basic('someone', password) }, remoteAddress: '10.3.0.2' })
  t.equal(owner.statusCode, 200, 'a possible username still logs in')
})
