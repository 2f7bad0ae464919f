// The credential cache over time: background re-verification, and changes made elsewhere.
import t, { type Test } from 'tap'
import { buildTestApp, createUser, type TestApp } from '../../helper.js'
import { until } from '../../helpers/until.js'
import { hashPassword } from '../../../lib/auth/passwords.js'

const route = '/configuration_manager/ismaintenance'
// Long enough that the time the test itself takes never reaches an entry's end: the entries' time
// passes when the test moves the clock.
const ttl = 60_000

// The cache reads the monotonic clock (performance.now): the test moves it forward instead of
// waiting. Every reader in this process sees time pass faster, never go back.
const realNow = performance.now.bind(performance)
let skipped = 0
performance.now = () => realNow() + skipped
t.teardown(() => { performance.now = realNow })
const pass = (ms: number): void => { skipped += ms }

/**
 * The users table as the test wants it: `hold` keeps every read waiting until `release`; with
 * `refuse` a read fails as an unreachable database does, so no password can be checked.
 */
function usersTable (t: Test, app: TestApp) {
  const findForLogin = app.usersRepository.findForLogin.bind(app.usersRepository)
  const table = { lookups: 0, held: undefined as Promise<void> | undefined, release: () => {}, refuse: false }
  app.usersRepository.findForLogin = async (username) => {
    table.lookups++
    if (table.refuse) throw Object.assign(new Error('the users table is out of reach'), { code: 'ECONNREFUSED' })
    await table.held
    return await findForLogin(username)
  }
  const hold = (): void => { table.held = new Promise((resolve) => { table.release = resolve }) }
  t.teardown(() => { table.release() })
  return { table, hold }
}

t.test('a client that keeps calling has its credentials re-verified beside its requests, never waiting', async (t) => {
  const app = await buildTestApp(t, { database: 'any', env: { AUTH_CACHE_TTL_MS: String(ttl) } })
  const auth = await createUser(app, { username: 'steady', roles: ['designer'] })
  const { table, hold } = usersTable(t, app)
  const call = async (): Promise<number> => (await app.inject({ url: route, headers: { authorization: auth } })).statusCode

  t.equal(await call(), 200)
  t.equal(table.lookups, 1, 'the first request verifies')
  // From here a request that had to read the users table would wait until the test releases it.
  hold()
  pass(ttl * 0.6)
  t.equal(await call(), 200, 'past half of the entry\'s life: answered from the cache, without waiting for the table')
  t.equal(table.lookups, 2, 'and verified again beside it')
  // The re-verification has its read under way: any read after it fails.
  table.refuse = true
  table.release()
  pass(ttl * 0.45)
  await until(async () => await call() === 200, 'the re-verified entry answers')
  t.equal(await call(), 200, 'past the first entry\'s end: the re-verified entry answers, with no password check')
})

// Changed behind the service's back (another instance, say): this one learns it on re-verification.
const changesElsewhere: Array<[string, (app: TestApp, username: string) => Promise<unknown>]> = [
  ['the user disabled', async (app, username) => await app.db.query('UPDATE users SET disabled = true WHERE username = $1', [username])],
  ['the password set to another one', async (app, username) =>
    await app.db.query('UPDATE users SET password_hash = $2 WHERE username = $1', [username, await hashPassword('another-password-entirely')])]
]
for (const [change, apply] of changesElsewhere) {
  t.test(`a re-verification that fails drops the remembered credential before its end: ${change}`, async (t) => {
    const app = await buildTestApp(t, { database: 'any', env: { AUTH_CACHE_TTL_MS: String(ttl) } })
    const auth = await createUser(app, { username: 'leaver' })
    const call = async (): Promise<number> => (await app.inject({ url: route, headers: { authorization: auth } })).statusCode
    const remembered = performance.now()
    t.equal(await call(), 200)
    await apply(app, 'leaver')
    pass(ttl * 0.6)
    t.equal(await call(), 200, 'still remembered')
    await until(async () => await call() === 401, 'the background check finds the change')
    t.equal(await call(), 401, 'refused once the background check found the change')
    t.ok(performance.now() - remembered < ttl, 'before the remembered entry would have expired')
  })
}

t.test('a password set again to the same value is checked in full in the background, and the credential kept', async (t) => {
  const app = await buildTestApp(t, { database: 'any', env: { AUTH_CACHE_TTL_MS: String(ttl) } })
  const auth = await createUser(app, { username: 'rehashed', password: 'the-same-password' })
  const { table } = usersTable(t, app)
  const call = async (): Promise<number> => (await app.inject({ url: route, headers: { authorization: auth } })).statusCode
  t.equal(await call(), 200)
  // A new salt: the stored hash differs, the password still matches it.
  await app.db.query("UPDATE users SET password_hash = $1 WHERE username = 'rehashed'", [await hashPassword('the-same-password')])
  const checks = app.passwordChecks()
  pass(ttl * 0.6)
  t.equal(await call(), 200, 'answered from the cache')
  t.equal(table.lookups, 2, 'the row read again beside it, once: the password is checked against the hash read')
  // From here no password check can succeed: a 200 comes from the re-verified entry.
  table.refuse = true
  pass(ttl * 0.5)
  await until(async () => await call() === 200, 'the re-verified entry answers')
  t.equal(await call(), 200, 'kept: past the first entry\'s end, answered from the cache without a password check')
  t.equal(app.passwordChecks(), checks + 1, 'the one check in the background')
})
