// Real exchanges with the service, each checked against the OpenAPI document it serves: a status,
// body or header a route produces that the document lacks fails here.
import t from 'tap'
import { adminAuth, buildTestApp, createUser } from '../helper.js'
import { createAdapter, nsoAdapter, startNso } from '../helpers/nso.js'
import { documentOf, exchangeChecker } from '../helpers/openapi.js'

t.test('representative requests of every area answer as the document says', async (t) => {
  // Some requests here are garbage on purpose (`?%zz`, a text body): their answers are checked, not them.
  const app = await buildTestApp(t, { database: 'any', env: { BODY_LIMIT: '4096' }, checkRequests: false })
  const check = exchangeChecker(await documentOf(app))
  const nso = await startNso(t)
  const reader = await createUser(app, { username: 'reader' })
  const admin = { authorization: adminAuth }
  const statuses = new Set<string>()
  // The checker itself finds what the document lacks.
  t.match(check({ method: 'GET', url: '/health', statusCode: 418, headers: {}, body: '' }), [/status not in the document/])
  t.match(check({ method: 'GET', url: '/whoami', statusCode: 200, headers: { 'content-type': 'application/json', etag: '"1"' }, body: '{}' }),
    [/header etag sent, not declared/, /body/])
  t.match(check({ method: 'GET', url: '/nowhere', statusCode: 200, headers: {}, body: '' }), [/no operation/])

  const send = async (method: string, url: string, options: { headers?: Record<string, string>, payload?: unknown, auth?: Record<string, string> | null } = {}) => {
    const auth = options.auth === null ? {} : options.auth ?? admin
    const response = await app.inject({
      method: method as 'GET',
      url,
      headers: { ...auth, ...options.headers },
      ...(options.payload === undefined ? {} : { payload: options.payload as string })
    })
    const exchange = { method, url, statusCode: response.statusCode, headers: response.headers, body: response.body }
    t.same(check(exchange), [], `${method} ${url} -> ${response.statusCode}`)
    statuses.add(String(response.statusCode))
    return response
  }

  await send('GET', '/health', { auth: null })
  await send('GET', '/ready', { auth: null })
  await send('POST', '/login', { auth: null, payload: { user: { username: 'admin', password: 'admin-password-for-tests' } } })
  await send('POST', '/login', { auth: null, payload: { user: { username: 'admin', password: 'wrong-password' } } })
  await send('GET', '/whoami')
  await send('GET', '/whoami', { auth: null })
  await send('GET', '/whoami?%zz')
  await send('GET', '/users?limit=2')
  await send('GET', '/users?limit=0')
  await send('GET', '/users/reader')
  await send('GET', '/users/nobody')
  await send('POST', '/users', { auth: { authorization: reader }, payload: { username: 'x', password: 'password-x' } })
  await send('GET', '/configuration_manager/ismaintenance')
  await send('GET', '/audit?limit=1')
  await send('GET', '/oauth/serviceAccounts')

  const created = await send('POST', '/studio/component-groups', { payload: { componentGroup: { name: 'exchanges', members: [{ path: ['a'] }], gbacRead: [] } } })
  const id = String(created.json().created._id)
  await send('POST', '/studio/component-groups', { payload: { componentGroup: { name: 'exchanges', members: [], gbacRead: [] } } })
  await send('POST', '/studio/component-groups', { payload: 'name=x', headers: { 'content-type': 'text/plain' } })
  await send('POST', '/studio/component-groups', { payload: { componentGroup: { name: 'big', members: [], gbacRead: [], description: 'x'.repeat(5000) } } })
  await send('GET', '/studio/component-groups?equals[name]=exchanges')
  await send('GET', '/automation-studio/component-groups?in[name]=exchanges&in[name]=other')
  await send('GET', `/studio/component-groups/${id}`)
  await send('GET', `/studio/component-groups/${'a'.repeat(3000)}`)
  await send('GET', '/studio/component-groups/000000000000000000000000')
  await send('PUT', `/studio/component-groups/${id}`, { headers: { 'if-match': '"1"' }, payload: { update: { name: 'exchanges', members: [], gbacRead: [] } } })
  await send('PUT', `/studio/component-groups/${id}`, { headers: { 'if-match': '"1"' }, payload: { update: { name: 'exchanges', members: [], gbacRead: [] } } })
  await send('PUT', `/studio/component-groups/${id}`, { payload: {} })
  await send('GET', `/studio/component-groups/${id}/versions`)
  await send('GET', `/studio/component-groups/${id}/versions/1`)
  await send('POST', `/studio/component-groups/${id}/versions/1/restore`, { payload: {} })
  await send('POST', '/studio/component-groups/import', { payload: { componentGroups: [{ name: 'imported', members: [], gbacRead: [] }] } })
  await send('DELETE', `/studio/component-groups/${id}`)
  await send('GET', '/studio/component-groups/deleted')

  await createAdapter(app, nsoAdapter('nso', nso))
  await send('GET', '/orchestrator_manager/adapters')
  await send('GET', '/nso_manager/adapters/nso')
  await send('POST', '/orchestrator_manager/adapters', { payload: nsoAdapter('nso', nso) })
  await send('PUT', '/orchestrator_manager/adapters/nso', { payload: { timeoutMs: 5000 } })
  await send('POST', '/orchestrator_manager/restAction/nso', {
    payload: { params: { path: '/restconf/data/tailf-ncs:devices/device=ce0', method: 'GET', accept: 'application/yang-data+json' }, body: {} }
  })
  await send('POST', '/nso_manager/restAction/nso', {
    payload: { params: { path: '/restconf/data/tailf-ncs:devices/device=no-such-device', method: 'GET', accept: 'application/yang-data+json' }, body: {} }
  })
  await send('POST', '/orchestrator_manager/restAction/missing', { payload: { params: { path: '/x', accept: 'application/yang-data+json' }, body: {} } })
  await send('DELETE', '/nso_manager/adapters/nso')

  await send('POST', '/logout')
  t.ok(['200', '400', '401', '403', '404', '409', '413', '414', '415', '502'].every((s) => statuses.has(s)), `statuses seen: ${[...statuses].sort().join(', ')}`)
})
