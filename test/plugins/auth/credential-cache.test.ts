// The credential cache over time: background re-verification, and changes made elsewhere.
import t from 'tap'
import { buildTestApp, createUser } from '../../helper.js'
import { hashPassword } from '../../../lib/auth/passwords.js'

const route = '/configuration_manager/ismaintenance'

t.test('a client that keeps calling has its credentials re-verified beside its requests, never waiting', async (t) => {
  const ttl = 4000
  const app = await buildTestApp(t, { database: 'any', env: { AUTH_CACHE_TTL_MS: String(ttl) } })
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
    const app = await buildTestApp(t, { database: 'any', env: { AUTH_CACHE_TTL_MS: String(ttl) } })
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
  const app = await buildTestApp(t, { database: 'any', env: { AUTH_CACHE_TTL_MS: String(ttl) } })
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
