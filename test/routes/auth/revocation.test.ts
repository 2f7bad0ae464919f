import t from 'tap'
import { adminAuth, buildTestApp, createTestDatabase, createUser, testDatabases, type TestApp } from '../../helper.js'
import { MAINTENANCE, login } from '../../helpers/auth.js'
import { until } from '../../helpers/until.js'

// Two instances share a database only on a PostgreSQL server (the embedded one belongs to one process).
for (const database of testDatabases.filter((kind) => kind === 'postgres')) {
  t.test(`revocation seen by a second instance on one ${database} database`, async (t) => {
    const db = await createTestDatabase(t, database)
    // A short trust in a token read so that the test need not wait the default 5 s.
    const env = { TOKEN_CACHE_TTL_MS: '300' }
    const one = await buildTestApp(t, { database: db, env })
    const two = await buildTestApp(t, { database: db, env })
    await createUser(one, { username: 'mover', password: 'mover-password-1' })
    /** The status of the first answer that is not a 200: the token's trust read before the change runs out. */
    const until401 = async (app: TestApp, headers: Record<string, string>): Promise<number> => {
      let status = 200
      await until(async () => {
        status = (await app.inject({ url: MAINTENANCE, headers })).statusCode
        return status !== 200
      }, 'the token is no longer accepted')
      return status
    }
    const changes: Array<[string, () => Promise<unknown>]> = [
      ['password changed', async () => await one.inject({ method: 'PUT', url: '/users/mover', headers: { authorization: adminAuth }, payload: { password: 'mover-password-2' } })],
      ['user disabled', async () => await one.inject({ method: 'PUT', url: '/users/mover', headers: { authorization: adminAuth }, payload: { disabled: true } })],
      ['user deleted', async () => await one.inject({ method: 'DELETE', url: '/users/mover', headers: { authorization: adminAuth } })],
      ['logout on the other instance', async () => undefined]
    ]
    let password = 'mover-password-1'
    for (const [change, apply] of changes) {
      if (change === 'user disabled') password = 'mover-password-2'
      if (change === 'logout on the other instance') {
        await createUser(one, { username: 'mover', password })
      }
      const { token } = await login(two, 'mover', password)
      const headers = { authorization: `Bearer ${token}` }
      t.equal((await two.inject({ url: MAINTENANCE, headers })).statusCode, 200, `${change}: the token works on the second instance`)
      t.equal((await one.inject({ url: MAINTENANCE, headers })).statusCode, 200, `${change}: and on the first`)
      if (change === 'logout on the other instance') await one.inject({ url: '/logout', headers })
      else await apply()
      t.equal(await until401(two, headers), 401, `${change}: refused on the second instance`)
      t.equal(await until401(one, headers), 401, `${change}: and on the first`)
      if (change === 'user disabled') await one.inject({ method: 'PUT', url: '/users/mover', headers: { authorization: adminAuth }, payload: { disabled: false } })
    }
  })
}
