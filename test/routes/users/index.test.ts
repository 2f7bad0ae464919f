import t from 'tap'
import { ADMIN, adminAuth, basic, buildTestApp, createUser, testDatabases } from '../../helper.js'

for (const database of testDatabases) {
  t.test(`users API on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database })

    t.test('admin creates, reads, lists, changes and deletes a user; passwords never come back', async (t) => {
      const created = await app.inject({
        method: 'POST',
        url: '/users',
        headers: { authorization: adminAuth },
        payload: { username: 'ann', password: 'ann-password', roles: ['designer'], groups: ['netops'], email: 'ann@example.com' }
      })
      t.equal(created.statusCode, 200)
      t.match(created.json(), { username: 'ann', roles: ['designer'], groups: ['netops'], email: 'ann@example.com', disabled: false })
      t.notMatch(created.body, /password|ann-password/)

      const annAuth = basic('ann', 'ann-password')
      t.equal((await app.inject({ url: '/configuration_manager/ismaintenance', headers: { authorization: annAuth } })).statusCode, 200)

      const list = await app.inject({ url: '/users?limit=1&skip=0', headers: { authorization: adminAuth } })
      t.equal(list.statusCode, 200)
      t.equal(list.json().total, 2)
      t.equal(list.json().items.length, 1)
      t.match(list.json(), { count: 1, skip: 0, end: 1, limit: 1, next: 1, previous: null })
      t.notMatch(list.body, /password/)

      const got = await app.inject({ url: '/users/ann', headers: { authorization: adminAuth } })
      t.equal(got.json().username, 'ann')

      const changed = await app.inject({
        method: 'PUT', url: '/users/ann', headers: { authorization: adminAuth }, payload: { password: 'new-password', groups: ['a', 'b'] }
      })
      t.equal(changed.statusCode, 200)
      t.same(changed.json().groups, ['a', 'b'])
      t.same(changed.json().roles, ['designer'], 'absent fields stay')
      t.equal((await app.inject({ url: '/configuration_manager/ismaintenance', headers: { authorization: annAuth } })).statusCode, 401,
        'the old password stops working at once (cached credentials are dropped)')
      t.equal((await app.inject({ url: '/configuration_manager/ismaintenance', headers: { authorization: basic('ann', 'new-password') } })).statusCode, 200)

      const disabled = await app.inject({ method: 'PUT', url: '/users/ann', headers: { authorization: adminAuth }, payload: { disabled: true } })
      t.equal(disabled.json().disabled, true)
      t.equal((await app.inject({ url: '/configuration_manager/ismaintenance', headers: { authorization: basic('ann', 'new-password') } })).statusCode, 401)

      const deleted = await app.inject({ method: 'DELETE', url: '/users/ann', headers: { authorization: adminAuth } })
      t.same(deleted.json(), { deleted: true })
      t.equal((await app.inject({ url: '/users/ann', headers: { authorization: adminAuth } })).statusCode, 404)
      t.equal((await app.inject({ method: 'DELETE', url: '/users/ann', headers: { authorization: adminAuth } })).statusCode, 404)
      t.equal((await app.inject({ method: 'PUT', url: '/users/ann', headers: { authorization: adminAuth }, payload: { disabled: false } })).statusCode, 404)
    })

    t.test('bad input is a 400 naming the field, and creates nothing', async (t) => {
      const cases = [
        { payload: { username: 'bob' }, field: 'password' },
        { payload: { username: 'bob', password: 'short' }, field: 'password' },
        { payload: { username: 'bob', password: 'long-enough', roles: ['root'] }, field: 'roles' },
        { payload: { username: 'bob', password: 'long-enough', extra: 1 }, field: 'additional' },
        { payload: { username: 'b o b', password: 'long-enough' }, field: 'username' },
        { payload: { username: 'bob', password: 12345678 }, field: 'password' }
      ]
      for (const c of cases) {
        const response = await app.inject({ method: 'POST', url: '/users', headers: { authorization: adminAuth }, payload: c.payload })
        t.equal(response.statusCode, 400, JSON.stringify(c.payload))
        t.match(response.json(), { statusCode: 400, error: 'Bad Request' })
        t.match(response.json().message, new RegExp(c.field))
      }
      t.equal((await app.inject({ url: '/users/bob', headers: { authorization: adminAuth } })).statusCode, 404)
      const empty = await app.inject({ method: 'PUT', url: '/users/admin', headers: { authorization: adminAuth }, payload: {} })
      t.equal(empty.statusCode, 400)
      const badPage = await app.inject({ url: '/users?limit=1000', headers: { authorization: adminAuth } })
      t.equal(badPage.statusCode, 400)
      t.match(badPage.json().message, /limit/)
    })

    t.test('duplicate username is a 409', async (t) => {
      await createUser(app, { username: 'dup' })
      const again = await app.inject({ method: 'POST', url: '/users', headers: { authorization: adminAuth }, payload: { username: 'dup', password: 'long-enough' } })
      t.equal(again.statusCode, 409)
      t.match(again.json(), { statusCode: 409, error: 'Conflict' })
    })

    t.test('the last enabled admin cannot be deleted, disabled or demoted', async (t) => {
      for (const request of [
        { method: 'DELETE' as const, url: `/users/${ADMIN.username}` },
        { method: 'PUT' as const, url: `/users/${ADMIN.username}`, payload: { disabled: true } },
        { method: 'PUT' as const, url: `/users/${ADMIN.username}`, payload: { roles: ['designer'] } }
      ]) {
        const response = await app.inject({ ...request, headers: { authorization: adminAuth } })
        t.equal(response.statusCode, 409, `${request.method} ${JSON.stringify(request.payload)}`)
      }
      const second = await createUser(app, { username: 'admin2', roles: ['admin'] })
      const removed = await app.inject({ method: 'DELETE', url: '/users/admin2', headers: { authorization: adminAuth } })
      t.equal(removed.statusCode, 200, 'another admin may go while one remains')
      t.equal((await app.inject({ url: '/users', headers: { authorization: second } })).statusCode, 401)
    })

    t.test('only admins manage users', async (t) => {
      const designer = await createUser(app, { username: 'dee', roles: ['designer'] })
      const response = await app.inject({ url: '/users', headers: { authorization: designer } })
      t.equal(response.statusCode, 403)
      t.match(response.json(), { statusCode: 403, error: 'Forbidden' })
      t.match(response.json().message, /admin/)
    })
  })
}
