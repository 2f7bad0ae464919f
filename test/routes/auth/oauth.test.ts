import t from 'tap'
import fc from 'fast-check'
import { adminAuth, basic, buildTestApp, createUser, testDatabases } from '../../helper.js'
import { FORM, MAINTENANCE, form, newServiceAccount } from '../../helpers/auth.js'

interface Client { client_id: string, name: string, description: string, roles: string[], groups: string[], _meta: { created: string, createdBy: { username: string }, updated: string, updatedBy: { username: string } } }
interface Page { items: Array<Partial<Client>>, results: Array<Partial<Client>>, count: number, skip: number, limit: number, total: number, next: number | null, previous: number | null }

for (const database of testDatabases) {
  t.test(`Service accounts and OAuth 2.0 client credentials on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database })
    await createUser(app, { username: 'robot', password: 'robot-password', roles: ['designer'], groups: ['net'] })
    const client = await newServiceAccount(app, 'robot', { roles: ['designer'], groups: ['net'] })
    t.same(Object.keys(client).sort(), ['client_id', 'client_secret'], 'the platform\'s answer')
    t.match(client, { client_id: /^[0-9a-f]{24}$/, client_secret: /^[A-Za-z0-9_-]{43}$/ })
    const { rows } = await app.db.query<{ secret_digest: string }>('SELECT secret_digest FROM oauth_clients')
    t.notOk(JSON.stringify(rows).includes(client.client_secret), 'the secret is stored as a digest')

    t.test('listing shows accounts without secrets; only admins manage them', async (t) => {
      const list = await app.inject({ url: '/oauth/serviceAccounts', headers: { authorization: adminAuth } })
      t.equal(list.statusCode, 200)
      const listed = { client_id: client.client_id, name: 'robot', description: 'ci', roles: ['designer'], groups: ['net'] }
      const body = list.json()
      t.match(body, { items: [listed], results: [listed], count: 1, skip: 0, end: 1, limit: 25, total: 1, next: null, previous: null }, 'the page envelope, items also as results')
      t.match(body.items[0]._meta, { createdBy: { username: 'admin' }, updatedBy: { username: 'admin' } })
      t.notOk(list.body.includes(client.client_secret))
      const robot = basic('robot', 'robot-password')
      t.equal((await app.inject({ url: '/oauth/serviceAccounts', headers: { authorization: robot } })).statusCode, 403)
      const bad = [{}, { accountData: {} }, { accountData: { name: '' } }, { accountData: { name: 'x', roles: ['root'] } }, { accountData: { name: 'x', extra: 1 } }, { name: 'x' }]
      for (const payload of bad) {
        const response = await app.inject({ method: 'POST', url: '/oauth/serviceAccounts', headers: { authorization: adminAuth }, payload })
        t.equal(response.statusCode, 400, JSON.stringify(payload))
      }
      t.equal((await app.inject({ method: 'PATCH', url: '/oauth/serviceAccounts/nope', headers: { authorization: adminAuth }, payload: { updates: { name: 'x' } } })).statusCode, 400, 'a malformed id')
      const unknown = await app.inject({ method: 'PATCH', url: `/oauth/serviceAccounts/${'0'.repeat(24)}`, headers: { authorization: adminAuth }, payload: { updates: { name: 'x' } } })
      t.match(unknown.json(), { statusCode: 404, code: 'SERVICE_ACCOUNT_NOT_FOUND' })
      t.equal((await app.inject({ method: 'PATCH', url: `/oauth/serviceAccounts/${'0'.repeat(24)}/regenerate`, headers: { authorization: adminAuth } })).statusCode, 404)
      t.equal((await app.inject({ method: 'PATCH', url: `/oauth/serviceAccounts/${client.client_id}`, headers: { authorization: adminAuth }, payload: { updates: {} } })).statusCode, 400, 'an empty update')
    })

    t.test('hostile create and update bodies: a 400 naming the field or a change, never a 500', async (t) => {
      const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }), fc.constantFrom('', 'x'.repeat(1001), '\u0000', 'admin'))
      const value = fc.oneof(text, fc.integer(), fc.constant(null), fc.array(text, { maxLength: 3 }), fc.dictionary(text, text, { maxKeys: 2 }))
      const fields = fc.dictionary(fc.constantFrom('name', 'description', 'roles', 'groups', '__proto__', 'constructor', 'username'), value, { maxKeys: 4 })
      const body = fc.oneof(fields.map((f) => ({ accountData: f })), fields.map((f) => ({ updates: f })), value)
      await fc.assert(fc.asyncProperty(body, fc.boolean(), async (payload, create) => {
        const response = await app.inject({
          method: create ? 'POST' : 'PATCH',
          url: create ? '/oauth/serviceAccounts' : `/oauth/serviceAccounts/${client.client_id}`,
          headers: { authorization: adminAuth, 'content-type': 'application/json' },
          payload: JSON.stringify(payload)
        })
        if (response.statusCode === 200) return true
        return response.statusCode === 400 && typeof response.json().message === 'string'
      }), { numRuns: 150 })
      // Put the account back as the following tests expect it.
      const reset = await app.inject({ method: 'PATCH', url: `/oauth/serviceAccounts/${client.client_id}`, headers: { authorization: adminAuth }, payload: { updates: { name: 'robot', description: 'ci', roles: ['designer'], groups: ['net'] } } })
      t.equal(reset.statusCode, 200, reset.body)
    })

    t.test('a form body gets a Bearer token, with Cache-Control: no-store, that carries the account\'s roles and groups', async (t) => {
      const response = await app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: form({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret }) })
      t.equal(response.statusCode, 200, response.body)
      t.equal(response.headers['cache-control'], 'no-store')
      const body = response.json()
      t.match(body, { access_token: /^[A-Za-z0-9_-]{43}$/, token_type: 'Bearer', expires_in: 3600 })
      const who = await app.inject({ url: '/whoami', headers: { authorization: `Bearer ${body.access_token}` } })
      t.match(who.json(), { id: client.client_id, provenance: 'oauth', username: `serviceAccount:${client.client_id}`, firstname: 'robot', roles: ['designer'], groups: [{ id: 'net', name: 'net', provenance: 'oauth' }], email: null, authenticatedBy: 'bearer', clientId: client.client_id })
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
      // A user of the account's name has nothing to do with it.
      await app.inject({ method: 'PUT', url: '/users/robot', headers: { authorization: adminAuth }, payload: { disabled: true } })
      t.equal((await app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: form(good) })).statusCode, 200)
      await app.inject({ method: 'PUT', url: '/users/robot', headers: { authorization: adminAuth }, payload: { disabled: false } })
      const json = await app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'text/plain' }, payload: 'grant_type=client_credentials' })
      t.equal(json.statusCode, 400, 'a body of another type')
      t.equal(json.json().error, 'invalid_request')
    })

    t.test('new roles hold for its tokens; a regenerated secret ends the old one and its tokens; deleting ends them too', async (t) => {
      const admin = { authorization: adminAuth }
      const issue = async (secret: string): Promise<string> => (await app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: form({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: secret }) })).json().access_token
      const first = await issue(client.client_secret)
      const write = async (token: string): Promise<number> => (await app.inject({ method: 'POST', url: '/studio/component-groups', headers: { authorization: `Bearer ${token}` }, payload: { name: `g-${Math.random()}`, members: [] } })).statusCode
      t.not(await write(first), 403, 'a designer may write')
      const updated = await app.inject({ method: 'PATCH', url: `/oauth/serviceAccounts/${client.client_id}`, headers: admin, payload: { updates: { roles: [], description: 'read only' } } })
      t.equal(updated.statusCode, 200, updated.body)
      t.match(updated.json(), { status: 'OK', message: String, data: { client_id: client.client_id, name: 'robot', description: 'read only', roles: [], groups: ['net'] } })
      t.equal(await write(first), 403, 'without the role, the same token may not')
      t.equal((await app.inject({ url: MAINTENANCE, headers: { authorization: `Bearer ${first}` } })).statusCode, 200, 'and still reads')

      const regenerated = await app.inject({ method: 'PATCH', url: `/oauth/serviceAccounts/${client.client_id}/regenerate`, headers: admin })
      t.equal(regenerated.statusCode, 200, regenerated.body)
      const fresh = regenerated.json()
      t.equal(fresh.client_id, client.client_id)
      t.not(fresh.client_secret, client.client_secret)
      t.equal((await app.inject({ url: MAINTENANCE, headers: { authorization: `Bearer ${first}` } })).statusCode, 401, 'the old secret\'s tokens end')
      const refused = await app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: form({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret }) })
      t.equal(refused.statusCode, 401, 'the old secret is refused')
      const second = await issue(fresh.client_secret)
      t.equal((await app.inject({ url: MAINTENANCE, headers: { authorization: `Bearer ${second}` } })).statusCode, 200)
      const deleted = await app.inject({ method: 'DELETE', url: `/oauth/serviceAccounts/${client.client_id}`, headers: admin })
      t.same(deleted.json(), { status: 'OK', message: `Service account "${client.client_id}" deleted` })
      t.equal((await app.inject({ url: MAINTENANCE, headers: { authorization: `Bearer ${second}` } })).statusCode, 401)
      t.equal((await app.inject({ method: 'DELETE', url: `/oauth/serviceAccounts/${client.client_id}`, headers: admin })).statusCode, 404)
    })
  })

  t.test(`GET /oauth/serviceAccounts on ${database} speaks the list language`, async (t) => {
    const app = await buildTestApp(t, { database })
    // Names that share parts for the filters, with LIKE's metacharacters and a letter beyond ASCII.
    const made: Array<Client & { client_secret: string }> = []
    for (const [description, name] of [['robot', 'nightly backup'], ['backup.bot', 'Nightly audit'], ['robot', 'ci_runner'],
      ['robot', 'ci-runner 100%'], ['backup.bot', 'Épsilon sync'], ['robot', 'z']]) {
      const response = await app.inject({ method: 'POST', url: '/oauth/serviceAccounts', headers: { authorization: adminAuth }, payload: { accountData: { name, description } } })
      t.equal(response.statusCode, 200, response.body)
      made.push(response.json())
    }
    const secrets = made.map((c) => c.client_secret)
    const all = (await app.inject({ url: '/oauth/serviceAccounts', headers: { authorization: adminAuth } })).json() as Page
    const clients = all.items as Client[]
    const byId = [...clients].sort((a, b) => a.client_id < b.client_id ? -1 : 1)
    const list = async (query: string) => await app.inject({ url: `/oauth/serviceAccounts?${query}`, headers: { authorization: adminAuth } })
    const page = async (query: string): Promise<Page> => {
      const response = await list(query)
      if (response.statusCode !== 200) throw new Error(`${query}: ${response.statusCode} ${response.body}`)
      t.notOk(secrets.some((secret) => response.body.includes(secret)), `${query}: no secret`)
      return response.json()
    }
    const names = (p: Page): Array<string | undefined> => p.items.map((c) => c.name)

    t.test('sorted by client_id, either way; pages followed by next read every client once', async (t) => {
      t.same(await page(''), { items: byId, results: byId, count: 6, skip: 0, end: 6, limit: 25, total: 6, next: null, previous: null })
      t.same((await page('sort=client_id&order=-1')).items, [...byId].reverse())
      const seen: Array<Partial<Client>> = []
      let skip: number | null = 0
      const previous: Array<number | null> = []
      while (skip !== null) {
        const p = await page(`limit=4&skip=${skip}`)
        t.equal(p.total, 6, `total at skip ${skip}`)
        t.equal(p.count, p.items.length)
        seen.push(...p.items)
        previous.push(p.previous)
        skip = p.next
      }
      t.same(seen, byId)
      t.same(previous, [null, 0])
      t.same(await page('skip=6'), { items: [], results: [], count: 0, skip: 6, end: 6, limit: 25, total: 6, next: null, previous: 0 }, 'past the end')
    })

    t.test('filters: on name by default, on description or client_id when named; values literal, case folded', async (t) => {
      const inOrder = (wanted: string[]): string[] => byId.map((c) => c.name).filter((n) => wanted.includes(n))
      t.same(names(await page('contains=NIGHTLY')), inOrder(['nightly backup', 'Nightly audit']))
      t.same(names(await page('starts-with=ci')), inOrder(['ci_runner', 'ci-runner 100%']))
      t.same(names(await page('startsWith=CI&contains=runner')), inOrder(['ci_runner', 'ci-runner 100%']), 'both spellings, filters combined')
      t.same(names(await page('contains=_')), ['ci_runner'], '_ is literal')
      t.same(names(await page('contains=%25')), ['ci-runner 100%'], '% is literal')
      t.same(names(await page('contains=%C3%A9psilon')), ['Épsilon sync'], 'case folding beyond ASCII')
      t.same(names(await page('equals=nightly%20backup')), ['nightly backup'])
      t.same(names(await page('equals=NIGHTLY%20BACKUP')), [], 'equals is exact')
      const ofBackupBot = await page('equals=backup.bot&equalsField=description')
      t.same(ofBackupBot.items, byId.filter((c) => c.description === 'backup.bot'))
      t.equal(ofBackupBot.total, 2)
      t.same(names(await page('contains=BACKUP&containsField=description')), inOrder(['Nightly audit', 'Épsilon sync']))
      const one = byId[3] as Client
      t.same((await page(`starts-with=${one.client_id.slice(0, 20)}&startsWithField=client_id`)).items, [one])
      t.same(await page('contains=nothing-like-this'), { items: [], results: [], count: 0, skip: 0, end: 0, limit: 25, total: 0, next: null, previous: null })
    })

    t.test('include and exclude', async (t) => {
      t.same((await page('include=name&limit=2')).items, byId.slice(0, 2).map((c) => ({ client_id: c.client_id, name: c.name })), 'the id comes along')
      t.same((await page('include=description&exclude=client_id&limit=2')).items, byId.slice(0, 2).map((c) => ({ description: c.description })))
      t.same((await page('exclude=_meta,roles,groups&limit=1')).items, byId.slice(0, 1).map((c) => ({ client_id: c.client_id, name: c.name, description: c.description })))
    })

    t.test('bad parameters: a 400 naming them, for admins; others get a 403', async (t) => {
      const cases: Array<[string, RegExp]> = [
        ['limit=0', /querystring\/limit/],
        ['limit=101', /querystring\/limit/],
        ['skip=-1', /querystring\/skip/],
        ['skip=1e400', /querystring\/skip/],
        ['order=desc', /querystring\/order/],
        ['sort=createdAt', /querystring\/sort names unknown field "createdAt"/],
        ['sort=name', /querystring\/sort names unknown field "name"/],
        ['equals=x&equalsField=secret_digest', /querystring\/equalsField names unknown field "secret_digest"/],
        ['containsField=description', /without querystring\/contains/],
        ['include=client_secret', /querystring\/include names unknown field "client_secret"/],
        ['include=name&exclude=description', /querystring\/exclude may only name "client_id"/],
        ['startsWith=a&starts-with=b', /two spellings/],
        ['contains=', /querystring\/contains/],
        [`contains=${'x'.repeat(201)}`, /querystring\/contains/],
        ['contains=a%00b', /querystring\/contains/],
        ['results=1', /additional properties \('results'\)/]
      ]
      for (const [query, message] of cases) {
        const response = await list(query)
        t.equal(response.statusCode, 400, query)
        t.match(response.json(), { statusCode: 400, error: 'Bad Request', message }, query)
      }
      const robot = await createUser(app, { username: 'reader' })
      t.equal((await app.inject({ url: '/oauth/serviceAccounts?limit=1', headers: { authorization: robot } })).statusCode, 403)
    })

    t.test('hostile parameter values: a page or a 400, never a 500', async (t) => {
      const keys = ['limit', 'skip', 'sort', 'order', 'include', 'exclude', 'equals', 'equalsField', 'contains', 'containsField',
        'starts-with', 'startsWith', 'startsWithField', 'constructor', '__proto__', 'skip[]']
      const value = fc.oneof(
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.constantFrom('0', '-1', '1', '1e400', 'NaN', '99999999999999999999', 'client_id', 'name', 'description', 'secret_digest', '%', '\\', '%00', 'name,client_id', ''),
        fc.integer().map(String)
      )
      await fc.assert(fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...keys), value), { maxLength: 5 }), async (pairs) => {
        const response = await list(pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'))
        if (response.statusCode === 200) {
          const body = response.json() as Page
          return Array.isArray(body.items) && body.count === body.items.length && body.items.length <= body.limit &&
            body.total <= clients.length && !secrets.some((secret) => response.body.includes(secret))
        }
        return response.statusCode === 400 && typeof response.json().message === 'string'
      }), { numRuns: 100 })
      t.pass('no 500 over the runs')
    })
  })
}

// The document is the same whatever the database.
t.test('OpenAPI: the security schemes and the new routes', async (t) => {
  const app = await buildTestApp(t, { database: 'any' })
  const doc = (await app.inject({ url: '/openapi.json' })).json()
  t.same(Object.keys(doc.components.securitySchemes).sort(), ['basicAuth', 'bearerAuth', 'cookieAuth', 'queryToken'])
  t.same(doc.components.securitySchemes.queryToken, { type: 'apiKey', in: 'query', name: 'token', description: String(doc.components.securitySchemes.queryToken.description) })
  for (const [path, method] of [['/login', 'post'], ['/oauth/token', 'post'], ['/logout', 'get'], ['/logout', 'post'], ['/whoami', 'get'], ['/oauth/serviceAccounts', 'post'], ['/oauth/serviceAccounts', 'get'],
    ['/oauth/serviceAccounts/{client_id}', 'patch'], ['/oauth/serviceAccounts/{client_id}/regenerate', 'patch'], ['/oauth/serviceAccounts/{client_id}', 'delete']] as const) {
    t.ok(doc.paths[path]?.[method], `${method} ${path} documented`)
  }
  const list = doc.paths['/oauth/serviceAccounts'].get
  t.same(list.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/ServiceAccountPage' })
  t.same(Object.keys(doc.components.schemas.ServiceAccountPage.properties).sort(), ['count', 'end', 'items', 'limit', 'next', 'previous', 'results', 'skip', 'total'], 'the list answers the page envelope')
  t.ok(['limit', 'skip', 'sort', 'order', 'include', 'exclude', 'equals', 'contains', 'starts-with'].every((name) => list.parameters.some((p: { name: string, in: string }) => p.in === 'query' && p.name === name)), 'and takes the list language')
  t.same(doc.paths['/whoami'].get.security, [{ basicAuth: [] }, { bearerAuth: [] }, { cookieAuth: [] }, { queryToken: [] }])
  t.same(doc.paths['/login'].post.security, [], 'logging in needs no credentials')
  const token = doc.paths['/oauth/token'].post
  t.same(token.security, [])
  t.ok(token.requestBody.content['application/x-www-form-urlencoded'])
  t.ok(token.requestBody.content['application/json'], 'JSON is taken too')
  t.same(Object.keys(token.responses).sort(), ['200', '400', '401', '429', '503'], 'its own errors only: every other refusal is a 400 invalid_request')
})
