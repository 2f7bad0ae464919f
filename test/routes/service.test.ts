import t from 'tap'
import { adminAuth, buildTestApp } from '../helper.js'

const route = '/configuration_manager/ismaintenance'

t.test('ismaintenance follows the bundle version and the override', async (t) => {
  const cases: Array<[Record<string, string>, string]> = [
    [{}, 'false'],
    [{ CONFIG_MANAGER_BUNDLE_VERSION: '3.102.0-2023.1.38' }, 'true'],
    [{ CONFIG_MANAGER_BUNDLE_VERSION: '2023.2.3' }, 'true'],
    [{ CONFIG_MANAGER_BUNDLE_VERSION: '2023.2.0' }, 'false'],
    [{ CONFIG_MANAGER_BUNDLE_VERSION: '2023.2.3', CONFIG_MANAGER_MAINTENANCE: 'false' }, 'false'],
    [{ CONFIG_MANAGER_BUNDLE_VERSION: '2023.2.0', CONFIG_MANAGER_MAINTENANCE: 'true' }, 'true']
  ]
  for (const [env, expected] of cases) {
    const app = await buildTestApp(t, { database: 'any', env })
    const response = await app.inject({ url: route, headers: { authorization: adminAuth } })
    t.equal(response.statusCode, 200)
    t.equal(response.headers['content-type'], 'application/json; charset=utf-8')
    t.equal(response.body, expected, JSON.stringify(env))
    await app.close()
  }
})

t.test('health, readiness and the OpenAPI document', async (t) => {
  const app = await buildTestApp(t, { database: 'any', env: { PUBLIC_URL: 'https://automation.example.com/api' } })
  t.same((await app.inject({ url: '/health' })).json(), { status: 'ok' })
  t.same((await app.inject({ url: '/ready' })).json(), { status: 'ready' })

  const doc = (await app.inject({ url: '/openapi.json' })).json()
  t.equal(doc.openapi, '3.0.3')
  t.same(doc.components.securitySchemes.basicAuth, { type: 'http', scheme: 'basic' })
  t.same(doc.servers, [{ url: 'https://automation.example.com/api' }])
  const maintenance = doc.paths['/configuration_manager/ismaintenance'].get
  t.same(maintenance.security, [{ basicAuth: [] }, { bearerAuth: [] }, { cookieAuth: [] }, { queryToken: [] }])
  t.equal(maintenance.responses['200'].content['application/json'].schema.type, 'boolean')
  t.ok(maintenance.responses['401'], 'documents the 401')
  t.ok(doc.paths['/users'].post.responses['403'], 'role-guarded routes document the 403')
  t.ok(doc.paths['/users/{username}'].delete)
  t.same(doc.paths['/health'].get.security, [], 'health is open')
  t.same(doc.paths['/users'].get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/UserPage' })
  t.notOk('password' in doc.components.schemas.User.properties, 'passwords never in a response schema')

  const ui = await app.inject({ url: '/docs/' })
  t.equal(ui.statusCode, 200)
  t.match(ui.headers['content-type'], /text\/html/)
})

t.test('behind a trusted proxy, the OpenAPI server follows X-Forwarded-*; untrusted, it is ignored', async (t) => {
  const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'automation.example.com', 'x-forwarded-prefix': '/netauto' }
  const trusting = await buildTestApp(t, { database: 'any', env: { TRUST_PROXY: 'loopback' } })
  t.same((await trusting.inject({ url: '/openapi.json', headers: forwarded })).json().servers, [{ url: 'https://automation.example.com/netauto' }])
  const ui = await trusting.inject({ url: '/docs/json', headers: forwarded })
  t.same(ui.json().servers, [{ url: 'https://automation.example.com/netauto' }], 'Swagger UI gets the same')

  const plain = await buildTestApp(t, { database: 'any' })
  t.match((await plain.inject({ url: '/openapi.json', headers: forwarded })).json().servers, [{ url: '/' }])
})
