import t from 'tap'
import { adminAuth, basic, buildTestApp, createUser, testDatabases } from '../helper.js'
import { FORM, MAINTENANCE, form, newClient } from './auth-helper.js'

for (const database of testDatabases) {
  t.test(`OAuth 2.0 client credentials on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database })
    await createUser(app, { username: 'robot', password: 'robot-password', roles: ['designer'], groups: ['net'] })
    const client = await newClient(app, 'robot')
    t.match(client, { client_id: /^[0-9a-f]{24}$/, client_secret: /^[A-Za-z0-9_-]{43}$/, username: 'robot', name: 'ci' })
    const { rows } = await app.db.query<{ secret_digest: string }>('SELECT secret_digest FROM oauth_clients')
    t.notOk(JSON.stringify(rows).includes(client.client_secret), 'the secret is stored as a digest')

    t.test('listing shows clients without secrets; only admins manage them', async (t) => {
      const list = await app.inject({ url: '/oauth/clients', headers: { authorization: adminAuth } })
      t.equal(list.statusCode, 200)
      t.equal(list.json().total, 1)
      t.notOk(list.body.includes(client.client_secret))
      t.notOk('client_secret' in list.json().results[0])
      const robot = basic('robot', 'robot-password')
      t.equal((await app.inject({ url: '/oauth/clients', headers: { authorization: robot } })).statusCode, 403)
      t.equal((await app.inject({ method: 'POST', url: '/oauth/clients', headers: { authorization: adminAuth }, payload: { username: 'nobody' } })).statusCode, 404)
    })

    t.test('a form body gets a Bearer token, with Cache-Control: no-store, that acts as the client\'s user', async (t) => {
      const response = await app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: form({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret }) })
      t.equal(response.statusCode, 200, response.body)
      t.equal(response.headers['cache-control'], 'no-store')
      const body = response.json()
      t.match(body, { access_token: /^[A-Za-z0-9_-]{43}$/, token_type: 'Bearer', expires_in: 3600 })
      const who = await app.inject({ url: '/whoami', headers: { authorization: `Bearer ${body.access_token}` } })
      t.same(who.json(), { username: 'robot', roles: ['designer'], groups: ['net'], email: null, authenticatedBy: 'bearer', clientId: client.client_id })
    })

    t.test('client_secret_basic gets one too', async (t) => {
      const response = await app.inject({ method: 'POST', url: '/oauth/token', headers: { ...FORM, authorization: basic(client.client_id, client.client_secret) }, payload: form({ grant_type: 'client_credentials' }) })
      t.equal(response.statusCode, 200, response.body)
      const token = response.json().access_token
      t.equal((await app.inject({ url: `/studio/component-groups?token=${token}` })).statusCode, 200)
    })

    t.test('the errors of RFC 6749 5.2, one by one', async (t) => {
      const good = { grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret }
      const cases: Array<[string, { headers?: Record<string, string>, payload: string }, number, string]> = [
        ['no grant_type', { payload: form({ client_id: good.client_id, client_secret: good.client_secret }) }, 400, 'invalid_request'],
        ['a repeated parameter', { payload: `${form(good)}&grant_type=client_credentials` }, 400, 'invalid_request'],
        ['two client authentications', { headers: { authorization: basic(good.client_id, good.client_secret) }, payload: form(good) }, 400, 'invalid_request'],
        ['another grant type', { payload: form({ ...good, grant_type: 'password' }) }, 400, 'unsupported_grant_type'],
        ['a scope', { payload: form({ ...good, scope: 'admin' }) }, 400, 'invalid_scope'],
        ['no client authentication', { payload: form({ grant_type: 'client_credentials' }) }, 401, 'invalid_client'],
        ['a wrong secret', { payload: form({ ...good, client_secret: 'x'.repeat(43) }) }, 401, 'invalid_client'],
        ['an unknown client', { payload: form({ ...good, client_id: '0'.repeat(24) }) }, 401, 'invalid_client'],
        ['a wrong secret as HTTP Basic', { headers: { authorization: basic(good.client_id, 'nope') }, payload: form({ grant_type: 'client_credentials' }) }, 401, 'invalid_client'],
        ['an unsupported client authentication scheme', { headers: { authorization: 'Digest x' }, payload: form({ grant_type: 'client_credentials' }) }, 401, 'invalid_client']
      ]
      for (const [name, request, status, error] of cases) {
        const response = await app.inject({ method: 'POST', url: '/oauth/token', headers: { ...FORM, ...request.headers }, payload: request.payload })
        t.equal(response.statusCode, status, `${name}: ${response.body}`)
        t.equal(response.json().error, error, name)
        t.type(response.json().error_description, 'string', name)
        t.equal(response.headers['cache-control'], 'no-store', name)
        if (status === 401) t.match(response.headers['www-authenticate'], /^Basic realm=/, `${name}: a 401 names the scheme`)
      }
      // The client's user disabled: the client authenticates but may not get a token.
      await app.inject({ method: 'PUT', url: '/users/robot', headers: { authorization: adminAuth }, payload: { disabled: true } })
      const disabled = await app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: form(good) })
      t.equal(disabled.statusCode, 400)
      t.equal(disabled.json().error, 'unauthorized_client')
      await app.inject({ method: 'PUT', url: '/users/robot', headers: { authorization: adminAuth }, payload: { disabled: false } })
      const json = await app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'text/plain' }, payload: 'grant_type=client_credentials' })
      t.equal(json.statusCode, 400, 'a body of another type')
      t.equal(json.json().error, 'invalid_request')
    })

    t.test('disabling the client\'s user ends its tokens; deleting the client ends them too', async (t) => {
      const issue = async (): Promise<string> => (await app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: form({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret }) })).json().access_token
      const first = await issue()
      t.equal((await app.inject({ url: MAINTENANCE, headers: { authorization: `Bearer ${first}` } })).statusCode, 200)
      await app.inject({ method: 'PUT', url: '/users/robot', headers: { authorization: adminAuth }, payload: { disabled: true } })
      t.equal((await app.inject({ url: MAINTENANCE, headers: { authorization: `Bearer ${first}` } })).statusCode, 401)
      await app.inject({ method: 'PUT', url: '/users/robot', headers: { authorization: adminAuth }, payload: { disabled: false } })
      t.equal((await app.inject({ url: MAINTENANCE, headers: { authorization: `Bearer ${first}` } })).statusCode, 401, 'enabling again does not bring it back')
      const second = await issue()
      t.equal((await app.inject({ url: MAINTENANCE, headers: { authorization: `Bearer ${second}` } })).statusCode, 200)
      const deleted = await app.inject({ method: 'DELETE', url: `/oauth/clients/${client.client_id}`, headers: { authorization: adminAuth } })
      t.same(deleted.json(), { deleted: true })
      t.equal((await app.inject({ url: MAINTENANCE, headers: { authorization: `Bearer ${second}` } })).statusCode, 401)
      t.equal((await app.inject({ method: 'DELETE', url: `/oauth/clients/${client.client_id}`, headers: { authorization: adminAuth } })).statusCode, 404)
    })
  })

  t.test(`OpenAPI on ${database}: the security schemes and the new routes`, async (t) => {
    const app = await buildTestApp(t, { database })
    const doc = (await app.inject({ url: '/openapi.json' })).json()
    t.same(Object.keys(doc.components.securitySchemes).sort(), ['basicAuth', 'bearerAuth', 'cookieAuth', 'queryToken'])
    t.same(doc.components.securitySchemes.queryToken, { type: 'apiKey', in: 'query', name: 'token', description: String(doc.components.securitySchemes.queryToken.description) })
    for (const [path, method] of [['/login', 'post'], ['/oauth/token', 'post'], ['/logout', 'get'], ['/logout', 'post'], ['/whoami', 'get'], ['/oauth/clients', 'post'], ['/oauth/clients', 'get'], ['/oauth/clients/{clientId}', 'delete']] as const) {
      t.ok(doc.paths[path]?.[method], `${method} ${path} documented`)
    }
    t.same(doc.paths['/whoami'].get.security, [{ basicAuth: [] }, { bearerAuth: [] }, { cookieAuth: [] }, { queryToken: [] }])
    t.equal(doc.paths['/login'].post.security, undefined, 'logging in needs no credentials')
    t.ok(doc.paths['/oauth/token'].post.requestBody.content['application/x-www-form-urlencoded'])
  })
}
