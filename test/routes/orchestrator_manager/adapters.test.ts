import t from 'tap'
import { adminAuth, buildTestApp, createUser, testDatabases } from '../../helper.js'

const URL_BASE = '/orchestrator_manager/adapters'
const PASSWORD = 'Nso-Adm1n-Pa55word'

const adapter = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  id: 'nso-lab', baseUrl: 'http://nso.example.net:8080/', username: 'admin', password: PASSWORD, ...over
})

for (const database of testDatabases) {
  t.test(`orchestrator adapters API on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database })
    const inject = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, authorization = adminAuth) =>
      await app.inject({ method, url, headers: { authorization }, ...(payload === undefined ? {} : { payload: payload as object }) })
    const sealedPassword = async (id: string): Promise<string | undefined> =>
      (await app.db.query<{ password_sealed: string }>('SELECT password_sealed FROM orchestrator_adapters WHERE id = $1', [id])).rows[0]?.password_sealed

    t.test('create, read, list, change and delete; the password never comes back', async (t) => {
      const created = await inject('POST', URL_BASE, adapter())
      t.equal(created.statusCode, 200)
      t.match(created.json(), {
        id: 'nso-lab',
        baseUrl: 'http://nso.example.net:8080',
        username: 'admin',
        timeoutMs: 30000,
        rejectUnauthorized: true,
        ca: null,
        createdAt: String,
        updatedAt: String
      })
      t.same(Object.keys(created.json()).sort(), ['baseUrl', 'ca', 'createdAt', 'id', 'rejectUnauthorized', 'timeoutMs', 'updatedAt', 'username'])

      const sealed = await sealedPassword('nso-lab')
      t.match(sealed, /^v1\./, 'stored encrypted')
      t.notOk(sealed?.includes(PASSWORD), 'never in clear in the database')

      const got = await inject('GET', `${URL_BASE}/nso-lab`)
      t.same(got.json(), created.json())
      const list = await inject('GET', URL_BASE)
      t.same(list.json(), { items: [created.json()], count: 1, skip: 0, end: 1, limit: 25, total: 1, next: null, previous: null })

      const changed = await inject('PUT', `${URL_BASE}/nso-lab`, { timeoutMs: 5000, baseUrl: 'https://NSO.example.net:8888/prefix/' })
      t.equal(changed.statusCode, 200)
      t.match(changed.json(), { timeoutMs: 5000, baseUrl: 'https://nso.example.net:8888/prefix', username: 'admin', rejectUnauthorized: true })
      t.ok(changed.json().updatedAt >= created.json().updatedAt)
      t.equal(await sealedPassword('nso-lab'), sealed, 'absent password stays')

      const newPassword = await inject('PUT', `${URL_BASE}/nso-lab`, { password: 'An0ther-Secret', rejectUnauthorized: false })
      t.equal(newPassword.statusCode, 200)
      t.equal(newPassword.json().rejectUnauthorized, false)
      t.not(await sealedPassword('nso-lab'), sealed, 'password re-sealed')

      for (const response of [created, got, list, changed, newPassword]) {
        t.notOk(response.body.includes(PASSWORD), 'password not in the response')
        t.notOk(response.body.includes('An0ther-Secret'), 'new password not in the response')
        t.notMatch(response.body, /password/i, 'no password field at all')
      }

      const deleted = await inject('DELETE', `${URL_BASE}/nso-lab`)
      t.same(deleted.json(), { deleted: true })
      t.equal((await inject('GET', `${URL_BASE}/nso-lab`)).statusCode, 404)
      t.equal((await inject('DELETE', `${URL_BASE}/nso-lab`)).statusCode, 404)
      const putMissing = await inject('PUT', `${URL_BASE}/nso-lab`, { timeoutMs: 1000 })
      t.equal(putMissing.statusCode, 404)
      t.match(putMissing.json(), { statusCode: 404, error: 'Not Found', message: 'Orchestrator adapter "nso-lab" not found' })
      t.match((await inject('GET', URL_BASE)).json(), { items: [], total: 0 })
    })

    t.test('all settings at creation, CA bundle kept and removed', async (t) => {
      const ca = '-----BEGIN CERTIFICATE-----\nMIIBfzCCASWgAwIBAgIUGx0xQ3pCWkJ3bmY2Zm1rZWxtTjBvMAoGCCqGSM49BAMCMBQxEjAQBgNVBAMMCWxhYi1jYS0wMTAeFw0yNTAxMDEwMDAwMDBaFw0zNTAxMDEwMDAwMDBaMBQxEjAQBgNVBAMMCWxhYi1jYS0wMTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABHk=\n-----END CERTIFICATE-----\n'
      const invalid = await inject('POST', URL_BASE, adapter({ id: 'tls', ca }))
      t.equal(invalid.statusCode, 400, 'a CA that does not parse')
      t.match(invalid.json().message, /^body\/ca: certificate 1 is not a valid X\.509 certificate/)

      const created = await inject('POST', URL_BASE, adapter({ id: 'tls', baseUrl: 'https://nso:8888', timeoutMs: 100, rejectUnauthorized: false }))
      t.equal(created.statusCode, 200)
      t.match(created.json(), { timeoutMs: 100, rejectUnauthorized: false, ca: null })
      const cleared = await inject('PUT', `${URL_BASE}/tls`, { ca: null })
      t.equal(cleared.json().ca, null)
      t.equal((await inject('DELETE', `${URL_BASE}/tls`)).statusCode, 200)
    })

    t.test('a bad baseUrl is a 400 that does not echo it, and stores nothing', async (t) => {
      const cases: Array<[string, RegExp]> = [
        ['ftp://nso.example.net/', /body\/baseUrl must use http or https/],
        ['http://admin:Url-Secret@nso:8080', /body\/baseUrl must not carry credentials/],
        ['http://nso:8080/?x=1', /body\/baseUrl must not carry a query/],
        ['http://nso:8080/#x', /body\/baseUrl must not carry a fragment/],
        ['nso:8080', /body\/baseUrl must use http or https/],
        ['/relative', /body\/baseUrl must be an absolute http or https URL/]
      ]
      for (const [baseUrl, message] of cases) {
        const response = await inject('POST', URL_BASE, adapter({ id: 'bad', baseUrl }))
        t.equal(response.statusCode, 400, baseUrl)
        t.match(response.json(), { statusCode: 400, error: 'Bad Request', code: 'INVALID_ADAPTER', message })
        t.notOk(response.body.includes('Url-Secret'), 'the URL is not echoed')
      }
      t.equal((await inject('GET', `${URL_BASE}/bad`)).statusCode, 404, 'nothing created')

      t.equal((await inject('POST', URL_BASE, adapter({ id: 'good' }))).statusCode, 200)
      const before = (await inject('GET', `${URL_BASE}/good`)).json()
      const put = await inject('PUT', `${URL_BASE}/good`, { baseUrl: 'http://u:Url-Secret@nso', timeoutMs: 999 })
      t.equal(put.statusCode, 400)
      t.notOk(put.body.includes('Url-Secret'))
      t.same((await inject('GET', `${URL_BASE}/good`)).json(), before, 'nothing changed, timeoutMs included')
      t.equal((await inject('DELETE', `${URL_BASE}/good`)).statusCode, 200)
    })

    t.test('a duplicate id is a 409 and leaves the first adapter as it was', async (t) => {
      const first = await inject('POST', URL_BASE, adapter({ id: 'dup' }))
      t.equal(first.statusCode, 200)
      const sealed = await sealedPassword('dup')
      const again = await inject('POST', URL_BASE, adapter({ id: 'dup', baseUrl: 'http://other:1', password: 'other-password' }))
      t.equal(again.statusCode, 409)
      t.match(again.json(), { statusCode: 409, error: 'Conflict', message: 'Orchestrator adapter "dup" already exists' })
      t.same((await inject('GET', `${URL_BASE}/dup`)).json(), first.json())
      t.equal(await sealedPassword('dup'), sealed)
      t.equal((await inject('DELETE', `${URL_BASE}/dup`)).statusCode, 200)
    })

    t.test('invalid bodies and ids are 400s naming the field', async (t) => {
      const cases: Array<[unknown, RegExp]> = [
        [adapter({ id: '../etc' }), /body\/id/],
        [adapter({ id: ' leading space' }), /body\/id/],
        [adapter({ id: 'trailing space ' }), /body\/id/],
        [adapter({ id: 'a/b' }), /body\/id/],
        [adapter({ id: 'tab\there' }), /body\/id/],
        [adapter({ id: '' }), /body\/id/],
        [adapter({ id: 'x'.repeat(129) }), /body\/id/],
        [adapter({ id: '-leading' }), /body\/id/],
        [adapter({ password: '' }), /body\/password/],
        [adapter({ password: undefined }), /password/],
        [adapter({ username: 'ad:min' }), /body\/username/],
        [adapter({ username: '' }), /body\/username/],
        [adapter({ timeoutMs: 50 }), /body\/timeoutMs/],
        [adapter({ timeoutMs: 600_001 }), /body\/timeoutMs/],
        [adapter({ timeoutMs: '1000' }), /body\/timeoutMs/],
        [adapter({ rejectUnauthorized: 'false' }), /body\/rejectUnauthorized/],
        [adapter({ ca: 'not a certificate' }), /body\/ca must hold at least one PEM certificate/],
        [adapter({ extra: true }), /additional/],
        [adapter({ baseUrl: 42 }), /body\/baseUrl/]
      ]
      for (const [payload, message] of cases) {
        const response = await inject('POST', URL_BASE, payload)
        t.equal(response.statusCode, 400, JSON.stringify(payload))
        t.match(response.json().message, message, JSON.stringify(payload))
      }
      t.match((await inject('GET', URL_BASE)).json(), { items: [], total: 0 }, 'nothing created')

      t.equal((await inject('POST', URL_BASE, adapter({ id: 'x1' }))).statusCode, 200)
      for (const [payload, message] of [
        [{}, /fewer than 1 properties/],
        [{ id: 'renamed' }, /additional/],
        [{ timeoutMs: 10 }, /body\/timeoutMs/],
        [{ ca: '' }, /body\/ca/]
      ] as Array<[unknown, RegExp]>) {
        const response = await inject('PUT', `${URL_BASE}/x1`, payload)
        t.equal(response.statusCode, 400, JSON.stringify(payload))
        t.match(response.json().message, message)
      }
      t.equal((await inject('GET', `${URL_BASE}/bad%2Fid`)).statusCode, 400, 'an id that cannot exist is a 400 on the path too')
      t.equal((await inject('GET', `${URL_BASE}/%20bad`)).statusCode, 400, 'a leading space too')
      t.equal((await inject('DELETE', `${URL_BASE}/x1`)).statusCode, 200)
    })

    t.test('only admins manage adapters', async (t) => {
      const designer = await createUser(app, { username: 'dee', roles: ['designer', 'apiwrite'] })
      for (const [method, url, payload] of [
        ['GET', URL_BASE, undefined],
        ['POST', URL_BASE, adapter({ id: 'nope' })],
        ['GET', `${URL_BASE}/nope`, undefined],
        ['PUT', `${URL_BASE}/nope`, { timeoutMs: 1000 }],
        ['DELETE', `${URL_BASE}/nope`, undefined]
      ] as const) {
        const forbidden = await inject(method, url, payload, designer)
        t.equal(forbidden.statusCode, 403, `${method} ${url}`)
        t.match(forbidden.json().message, /admin/)
        const anonymous = await app.inject({ method, url })
        t.equal(anonymous.statusCode, 401, `${method} ${url} without credentials`)
      }
      t.match((await inject('GET', URL_BASE)).json(), { items: [], total: 0 }, 'nothing created')
    })
  })
}

t.test('the OpenAPI document describes the adapter and relay routes; passwords are write-only', async (t) => {
  const app = await buildTestApp(t, { database: 'any' })
  const doc = (await app.inject({ url: '/openapi.json' })).json()
  const paths = doc.paths
  t.same(Object.keys(paths['/orchestrator_manager/adapters']).sort(), ['get', 'post'])
  t.same(Object.keys(paths['/orchestrator_manager/adapters/{id}']).sort(), ['delete', 'get', 'put'])

  const create = paths['/orchestrator_manager/adapters'].post
  const createSchema = create.requestBody.content['application/json'].schema
  t.same(createSchema.required.sort(), ['baseUrl', 'id', 'password', 'username'])
  t.equal(createSchema.properties.password.writeOnly, true)
  t.equal(paths['/orchestrator_manager/adapters/{id}'].put.requestBody.content['application/json'].schema.properties.password.writeOnly, true)
  t.same(create.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/Adapter' })
  const adapterSchema = doc.components.schemas.Adapter
  t.ok(adapterSchema.properties.baseUrl, 'the adapter is described')
  t.notOk('password' in adapterSchema.properties, 'no password in a response')
  t.same(Object.keys(create.responses).sort(), ['200', '400', '401', '403', '409', '413', '415', '429', '503'])
  t.same(create.security, [{ basicAuth: [] }, { bearerAuth: [] }, { cookieAuth: [] }, { queryToken: [] }])
  t.match(create.description, /Roles: admin/)

  const action = paths['/orchestrator_manager/restAction/{adapterId}'].post
  t.same(Object.keys(action.responses).sort(), ['200', '400', '401', '403', '404', '413', '414', '415', '429', '500', '502', '503', '504'])
  t.same(action.requestBody.content['application/json'].schema.required.sort(), ['body', 'params'])
  t.equal(action.requestBody.content['application/json'].schema.additionalProperties, false)
  t.same(action.requestBody.content['application/json'].schema.properties.params.required.sort(), ['accept', 'path'])
  t.match(action.responses['200'].content['application/json'].schema, { type: 'array', items: { $ref: '#/components/schemas/RelayResult' } })
  t.match(doc.components.schemas.RelayResult, { required: ['result'] })
  t.match(action.responses['502'].content['application/json'].schema.properties, { upstream: { properties: { status: {}, body: {} } } })
  t.match(action.parameters, [{ in: 'path', name: 'adapterId', required: true }])
  t.same(action.security, [{ basicAuth: [] }, { bearerAuth: [] }, { cookieAuth: [] }, { queryToken: [] }])

  const query = paths['/orchestrator_manager/restQuery/{adapterId}'].post
  t.same(Object.keys(query.responses).sort(), ['200', '204', '400', '401', '403', '404', '413', '414', '415', '429', '500', '502', '503', '504'])
  t.same(Object.keys(query.requestBody.content['application/json'].schema.properties), ['params'])
  const document = query.responses['200'].content['*/*'].schema
  t.same(document.anyOf.map((s: { type: string }) => s.type), ['object', 'array', 'string'], 'a JSON object or array, or text')
})
