// The platform's own paths (/automation-studio, /nso_manager) beside the contract's, called over a
// real socket as the platform's clients call them: ipctl sends `Content-Type: application/json`
// and `Content-Length: 0` on GET and DELETE.
import t from 'tap'
import fc from 'fast-check'
import { request } from 'undici'
import { adminAuth, buildTestApp, createUser, testDatabases } from '../helper.js'
import { nsoAdapter, startNso } from '../helpers/nso.js'

const YANG_JSON = 'application/yang-data+json'
const BODILESS = { 'content-type': 'application/json', 'content-length': '0' }

interface Group { _id: string, name: string, members: unknown[], version: number }
interface Page<T> { items: T[], count: number, skip: number, end: number, limit: number, total: number, next: number | null }

for (const database of testDatabases) {
  t.test(`the platform's paths on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database })
    await app.listen({ host: '127.0.0.1', port: 0 })
    const address = app.server.address()
    if (address === null || typeof address === 'string') throw new Error('no TCP address')
    const base = `http://127.0.0.1:${address.port}`
    const designer = await createUser(app, { username: 'dana', roles: ['designer'] })

    // A request as the platform's clients send it: JSON bodies, or none with Content-Length: 0.
    const call = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, authorization: string, body?: unknown) => {
      const response = await request(base + path, {
        method,
        headers: body === undefined ? { ...BODILESS, authorization } : { 'content-type': 'application/json', authorization },
        body: body === undefined ? undefined : JSON.stringify(body)
      })
      const text = await response.body.text()
      return { status: response.statusCode, headers: response.headers, json: text === '' ? undefined : JSON.parse(text) }
    }

    t.test('a component group made, listed, changed and deleted under /automation-studio', async (t) => {
      const created = await call('POST', '/automation-studio/component-groups', designer, {
        componentGroup: { name: 'core', gbacRead: [], members: { path: ['devices', 'core'] }, version: 2.5 }
      })
      t.equal(created.status, 200)
      const group = created.json.created as Group
      t.same(group.members, [{ path: ['devices', 'core'] }], 'one member became a list of one, kept without a type')
      t.equal(group.version, 1, 'the server owns the version')
      t.equal(created.json.edit, `/automation-studio/#/edit?tab=0&component-group=${group._id}`, 'the edit link follows the path used')

      const other = await call('POST', '/studio/component-groups', designer, { componentGroup: { name: 'edge', gbacRead: [], members: [] } })
      t.equal(other.json.edit, `/studio/#/edit?tab=0&component-group=${other.json.created._id as string}`, 'and on the contract path, the contract link')

      const listed = await call('GET', '/automation-studio/component-groups?equals[name]=core', designer)
      t.equal(listed.status, 200)
      const page = listed.json as Page<Group>
      t.same(page.items.map((g) => g.name), ['core'])
      t.match(page, { count: 1, skip: 0, end: 1, total: 1, next: null })
      const read = await call('GET', `/studio/component-groups/${group._id}`, designer)
      t.same(read.json.members, [{ path: ['devices', 'core'] }], 'the same group on the contract path, untyped as sent')

      const updated = await call('PUT', `/automation-studio/component-groups/${group._id}`, designer, {
        update: { name: 'core', gbacRead: [], members: [{ path: 'a/b', sourceCollection: 'workflows', ref: 'w1' }, { path: ['x'], type: 'folder' }] }
      })
      t.equal(updated.status, 200)
      t.equal(updated.json.updated.version, 2)
      t.same(updated.json.updated.members, [{ path: 'a/b', sourceCollection: 'workflows', ref: 'w1' }, { path: ['x'], type: 'folder' }])
      t.equal(updated.json.edit, `/automation-studio/#/edit?tab=0&component-group=${group._id}`)

      const deleted = await call('DELETE', `/automation-studio/component-groups/${group._id}`, designer)
      t.equal(deleted.status, 200)
      t.equal(deleted.json.message, `Component group "${group._id}" deleted`)
      t.equal((await call('GET', `/automation-studio/component-groups/${group._id}`, designer)).status, 404)
      t.equal((await call('DELETE', `/studio/component-groups/${other.json.created._id as string}`, designer)).status, 200)
    })

    t.test('import takes one member, untyped members and any version number', async (t) => {
      const imported = await call('POST', '/automation-studio/component-groups/import', designer, {
        componentGroups: [
          { name: 'imported-a', gbacRead: [], members: { path: 'p', sourceCollection: 'c', ref: 'r' }, version: 3.7 },
          { name: 'imported-b', gbacRead: [], members: [{ path: ['f'] }], version: -1 }
        ]
      })
      t.equal(imported.status, 200)
      const created = (imported.json.imported as Array<{ created: Group }>).map((r) => r.created)
      t.same(created.map((g) => [g.members, g.version]), [[[{ path: 'p', sourceCollection: 'c', ref: 'r' }], 1], [[{ path: ['f'] }], 1]])
      t.equal(imported.json.imported[0].original.members.path, 'p', 'the original as given')
      // A typed member must still have its type's shape; what the contract requires stays required.
      const refused = [
        { name: 'bad-a', gbacRead: [], members: { path: ['f'], type: 'component' } },
        { name: 'bad-b', gbacRead: [], members: { path: 'p' } },
        { name: 'bad-c', members: [] },
        { name: 'bad-d', gbacRead: [], members: [], version: '1' }
      ]
      for (const componentGroup of refused) {
        const response = await call('POST', '/automation-studio/component-groups', designer, { componentGroup })
        t.equal(response.status, 400, componentGroup.name)
        t.match(response.json.message, /body\/componentGroup/, 'the message names the field')
      }
      for (const g of created) await call('DELETE', `/studio/component-groups/${g._id}`, designer)
      t.same((await call('GET', '/automation-studio/component-groups?starts-with[name]=bad', designer)).json.items, [], 'nothing refused was stored')
    })

    t.test('the bracket filters of the platform\'s query guide', async (t) => {
      for (const name of ['alpha', 'beta', 'gamma']) {
        await call('POST', '/studio/component-groups', designer, { componentGroup: { name, gbacRead: [], members: [] } })
      }
      const names = async (query: string): Promise<string[]> => {
        const response = await call('GET', `/automation-studio/component-groups?${query}`, designer)
        t.equal(response.status, 200, query)
        return (response.json as Page<Group>).items.map((g) => g.name)
      }
      t.same(await names('contains[name]=MM'), ['gamma'], 'contains ignores case')
      t.same(await names('starts-with[name]=b'), ['beta'])
      t.same(await names('startsWith[name]=al'), ['alpha'])
      t.same(await names('in[name]=alpha&in[name]=gamma&in[name]=nothing'), ['alpha', 'gamma'])
      t.same(await names('in[name]=beta'), ['beta'], 'one value')
      t.same(await names('not-in[name]=alpha&not-in[name]=beta'), ['gamma'])
      t.same(await names('contains[name]=a&not-in[name]=gamma&sort=name&order=-1'), ['beta', 'alpha'], 'filters combine')
      t.same(await names('equals[name]=a%2Cb'), [], 'a comma is part of the value')
      const refused: Array<[string, RegExp]> = [
        ['equals[description]=x', /querystring\/equals\[description\] names unknown field "description"; known: name/],
        ['equals[]=x', /querystring\/equals\[\] names no field/],
        ['ends-with[name]=x', /additional properties \('ends-with\[name\]'\)/],
        ['equals[name=x', /additional properties \('equals\[name'\)/],
        ['equals[name]=a&equals[name]=b', /querystring\/equals\[name\]/],
        ['equals[name]=', /querystring\/equals\[name\]/],
        [`in[name]=${Array.from({ length: 101 }, (_, i) => `v${i}`).join('&in[name]=')}`, /querystring\/in\[name\]/]
      ]
      for (const [query, message] of refused) {
        const response = await call('GET', `/automation-studio/component-groups?${query}`, designer)
        t.equal(response.status, 400, query)
        t.match(response.json.message, message, query)
      }
    })

    t.test('restAction, restQuery and adapters under /nso_manager', async (t) => {
      const nso = await startNso(t)
      const adapter = await call('POST', '/nso_manager/adapters', adminAuth, nsoAdapter('nso-p', nso))
      t.equal(adapter.status, 200)
      const listed = await call('GET', '/nso_manager/adapters?equals[id]=nso-p&exclude=ca', adminAuth)
      t.match(listed.json, { items: [{ id: 'nso-p', baseUrl: nso.url }], count: 1, end: 1, total: 1 })
      t.equal((await call('GET', '/orchestrator_manager/adapters/nso-p', adminAuth)).json.id, 'nso-p', 'one registry behind both paths')

      const path = '/restconf/data/tailf-ncs:devices/device=ce0'
      const queried = await call('POST', '/nso_manager/restQuery/nso-p', adminAuth, { params: { path, accept: YANG_JSON } })
      t.equal(queried.status, 200)
      t.equal(queried.headers['content-type'], YANG_JSON)
      t.same(queried.json, { 'tailf-ncs:device': [nso.getData('tailf-ncs:devices/device=ce0')] })

      const ce9 = { name: 'ce9', address: '10.1.1.9', port: 10029, authgroup: 'default' }
      const acted = await call('POST', '/nso_manager/restAction/nso-p', adminAuth, { params: { path: '/restconf/data/tailf-ncs:devices', accept: YANG_JSON }, body: { 'tailf-ncs:device': [ce9] } })
      t.equal(acted.status, 200)
      t.same(acted.json, [{ result: '201' }])
      t.same(nso.getData('tailf-ncs:devices/device=ce9'), ce9, 'created upstream')

      t.equal((await call('DELETE', '/nso_manager/adapters/nso-p', adminAuth)).status, 200)
      t.equal((await call('GET', '/orchestrator_manager/adapters/nso-p', adminAuth)).status, 404)
    })

    t.test('authentication, roles and metrics work alike on both families', async (t) => {
      t.equal((await call('GET', '/automation-studio/component-groups', 'Basic bm9ib2R5Om5vcGU=')).status, 401)
      t.equal((await call('POST', '/nso_manager/restQuery/any', designer, { params: { path: '/x', accept: YANG_JSON } })).status, 403, 'the relay stays admin only')
      t.equal((await call('GET', '/nso_manager/adapters', designer)).status, 403)
      t.equal((await call('POST', '/automation-studio/component-groups', (await createUser(app, { username: 'reader' })),
        { componentGroup: { name: 'x', gbacRead: [], members: [] } })).status, 403, 'writes stay for writers')
      const metrics = await request(`${base}/metrics`, { headers: { authorization: adminAuth } })
      t.equal(metrics.statusCode, 200)
      const text = await metrics.body.text()
      t.match(text, /route="\/automation-studio\/component-groups"/, 'labelled by the platform path\'s pattern')
      t.match(text, /route="\/studio\/component-groups\/:id"/)
    })
  })
}

t.test('hostile bracket parameters are a 400 naming the parameter, or a page', async (t) => {
  const app = await buildTestApp(t)
  const key = fc.tuple(
    fc.constantFrom('equals', 'contains', 'starts-with', 'startsWith', 'in', 'not-in', 'ends-with', 'equals[', '', '__proto__'),
    fc.oneof(fc.constantFrom('[name]', '[_id]', '[]', '[name', 'name]', '[[name]]', '[__proto__]', '[constructor]'), fc.string({ maxLength: 70 }).map((s) => `[${s}]`))
  ).map(([op, field]) => `${op}${field}`)
  const value = fc.oneof(fc.string({ maxLength: 300 }), fc.constant(''))
  await fc.assert(fc.asyncProperty(fc.array(fc.tuple(key, value), { minLength: 1, maxLength: 4 }), async (pairs) => {
    const query = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')
    const response = await app.inject({ url: `/automation-studio/component-groups?${query}`, headers: { authorization: adminAuth } })
    if (response.statusCode === 200) {
      const page = response.json() as Page<Group>
      return Array.isArray(page.items) && page.end === page.skip + page.count
    }
    const message = String(response.json().message)
    return response.statusCode === 400 && /querystring/.test(message)
  }), { numRuns: 150 })
  t.pass('every answer was a page or a 400 naming the query string')
})

t.test('OpenAPI: the contract\'s paths first, the platform\'s as aliases with operation ids of their own', async (t) => {
  const app = await buildTestApp(t, { database: 'any' })
  const doc = (await app.inject({ url: '/openapi.json' })).json()
  const pairs: Array<[string, string, string]> = [
    ['/studio/component-groups', '/automation-studio/component-groups', 'get'],
    ['/studio/component-groups/{id}', '/automation-studio/component-groups/{id}', 'put'],
    ['/studio/component-groups/import', '/automation-studio/component-groups/import', 'post'],
    ['/orchestrator_manager/restAction/{adapterId}', '/nso_manager/restAction/{adapterId}', 'post'],
    ['/orchestrator_manager/restQuery/{adapterId}', '/nso_manager/restQuery/{adapterId}', 'post'],
    ['/orchestrator_manager/adapters/{id}', '/nso_manager/adapters/{id}', 'delete']
  ]
  const ids = new Set<string>()
  for (const [primary, alias, method] of pairs) {
    const main = doc.paths[primary]?.[method]
    const other = doc.paths[alias]?.[method]
    t.ok(main, `${method} ${primary}`)
    t.ok(other, `${method} ${alias}`)
    t.notSame(main.tags, ['platform paths'], 'the contract path is the primary entry')
    t.same(other.tags, ['platform paths'])
    t.match(other.summary, /\(platform path\)$/)
    t.match(other.description, new RegExp(`The platform's path for \`${method.toUpperCase()} ${primary.replace(/\{(\w+)\}/g, ':$1')}\``))
    t.same(other.responses, main.responses, 'same answers')
    t.notOk(ids.has(other.operationId), 'operation ids are unique')
    ids.add(other.operationId)
  }
  t.equal(doc.paths['/nso_manager/adapters/{id}'].delete.operationId, 'deleteNsoManagerAdaptersById')
  const order = Object.keys(doc.paths)
  t.ok(order.indexOf('/studio/component-groups') < order.indexOf('/automation-studio/component-groups'), 'the contract path comes first')
})
