// Over 300 lines: restAction and restQuery share one NSO stand-in and app per database, case by case.
import t, { type Test } from 'tap'
import { request } from 'undici'
import { adminAuth, buildTestApp, createUser, testDatabases, type TestApp } from '../../helper.js'
import { seedDatastore, startNsoServer, type NsoServer, type ReceivedRequest } from '../../fixtures/nso-server.js'
import { createAdapter, nsoAdapter, startNso } from '../../helpers/nso.js'

const YANG_JSON = 'application/yang-data+json'
const YANG_XML = 'application/yang-data+xml'
const VND_DATA_JSON = 'application/vnd.yang.data+json'
const VND_COLLECTION_JSON = 'application/vnd.yang.collection+json'
const VND_COLLECTION_XML = 'application/vnd.yang.collection+xml'

const restconfError = (type: string, tag: string, message: string): unknown => ({
  'ietf-restconf:errors': { error: [{ 'error-type': type, 'error-tag': tag, 'error-message': message }] }
})

// The caller's own headers, which must never reach the orchestrator.
const CALLER_HEADERS = { authorization: adminAuth, cookie: 'session=abc', 'x-forwarded-for': '203.0.113.9', 'x-custom': 'caller' }

async function action (app: TestApp, adapterId: string, params: Record<string, unknown>, body: unknown = {}) {
  return await app.inject({
    method: 'POST', url: `/orchestrator_manager/restAction/${adapterId}`, headers: CALLER_HEADERS, payload: { params, body } as object
  })
}

async function query (app: TestApp, adapterId: string, params: Record<string, unknown>) {
  return await app.inject({ method: 'POST', url: `/orchestrator_manager/restQuery/${adapterId}`, headers: CALLER_HEADERS, payload: { params } })
}

function only (t: Test, nso: NsoServer): ReceivedRequest {
  t.equal(nso.received.length, 1, 'exactly one request upstream')
  return nso.received[0] as ReceivedRequest
}

for (const database of testDatabases) {
  t.test(`orchestrator relay on ${database}`, async (t) => {
    // A long cache lifetime: only changes made through this instance may show before it ends.
    const app = await buildTestApp(t, { database, env: { ORCHESTRATOR_ADAPTER_CACHE_TTL_MS: '60000' } })
    const nso = await startNso(t)
    await createAdapter(app, nsoAdapter('nso', nso))
    t.beforeEach(() => { nso.reset() })

    t.test('restQuery relays a GET and answers the document byte for byte', async (t) => {
      const path = '/restconf/data/tailf-ncs:devices/device=ce0?depth=2'
      const response = await query(app, 'nso', { path, accept: YANG_JSON })
      t.equal(response.statusCode, 200)
      t.equal(response.headers['content-type'], YANG_JSON)
      const received = only(t, nso)
      t.equal(received.method, 'GET')
      t.equal(received.url, path, 'path and query as given')
      t.equal(received.body, '')
      t.same(Object.keys(received.headers).sort(), ['accept', 'authorization', 'connection', 'host'], 'no other header goes upstream')
      t.equal(received.headers.accept, YANG_JSON)
      t.equal(received.headers.authorization, nso.authorization, "the adapter's credentials, not the caller's")

      const direct = await request(nso.url + path, { headers: { authorization: nso.authorization, accept: YANG_JSON } })
      t.equal(response.body, await direct.body.text(), 'same bytes as the orchestrator sends')
      t.same(response.json(), { 'tailf-ncs:device': [nso.getData('tailf-ncs:devices/device=ce0')] })
    })

    t.test('a document of many chunks arrives whole', async (t) => {
      const devices = nso.data['tailf-ncs:devices'] as { device: unknown[] }
      devices.device = Array.from({ length: 3000 }, (_, i) => ({ name: `pe${i}`, address: `10.9.${i >> 8}.${i & 255}`, port: 22 }))
      const path = '/restconf/data/tailf-ncs:devices/device'
      const response = await query(app, 'nso', { path, accept: YANG_JSON })
      t.equal(response.statusCode, 200)
      const direct = await request(nso.url + path, { headers: { authorization: nso.authorization, accept: YANG_JSON } })
      const expected = await direct.body.text()
      t.ok(expected.length > 128 * 1024, `large enough to span several reads (${expected.length} bytes)`)
      t.equal(response.body, expected, 'same bytes')
      const read = await action(app, 'nso', { path, accept: YANG_JSON, method: 'GET' })
      t.equal((read.json() as Array<{ data: { 'tailf-ncs:device': unknown[] } }>)[0]?.data['tailf-ncs:device'].length, 3000)
    })

    t.test('restQuery with the legacy media types, JSON and XML', async (t) => {
      const cases: Array<[string, string]> = [
        ['/api/running/devices/device/ce0?deep', VND_DATA_JSON],
        ['/api/running/devices/device?deep', VND_COLLECTION_JSON],
        ['/api/running/devices/device/ce1/config/interface/GigabitEthernet', VND_COLLECTION_XML],
        ['/restconf/data/tailf-ncs:devices/device=ce0/address', YANG_XML]
      ]
      for (const [path, accept] of cases) {
        nso.reset()
        const response = await query(app, 'nso', { path, accept })
        t.equal(response.statusCode, 200, path)
        t.equal(response.headers['content-type'], accept, `${path}: the orchestrator's content type`)
        const direct = await request(nso.url + path, { headers: { authorization: nso.authorization, accept } })
        t.equal(response.body, await direct.body.text(), `${path}: same bytes`)
        t.equal(nso.received[0]?.headers.accept, accept)
        t.equal(nso.received[0]?.url, path)
      }
      const collection = await query(app, 'nso', { path: '/api/running/devices/device?deep', accept: VND_COLLECTION_JSON })
      t.same(collection.json(), { collection: { 'tailf-ncs:device': (seedDatastore()['tailf-ncs:devices'] as { device: unknown[] }).device } })
      const xml = await query(app, 'nso', { path: '/restconf/data/tailf-ncs:devices/device=ce0/address', accept: YANG_XML })
      t.equal(xml.body, '<address xmlns="http://tail-f.com/ns/ncs">127.0.0.1</address>')
    })

    t.test('restAction: RFC 8040 create, conflict, merge, replace, delete and read', async (t) => {
      const ce2 = { name: 'ce2', address: '10.1.1.2', port: 10024, authgroup: 'default' }
      const created = await action(app, 'nso', { path: '/restconf/data/tailf-ncs:devices', accept: YANG_JSON }, { 'tailf-ncs:device': [ce2] })
      t.equal(created.statusCode, 200)
      t.same(created.json(), [{ result: '201' }], 'no data when the orchestrator sent no body')
      let received = only(t, nso)
      t.equal(received.method, 'POST', 'POST by default')
      t.equal(received.url, '/restconf/data/tailf-ncs:devices')
      t.equal(received.headers['content-type'], YANG_JSON, 'Content-Type defaults to accept')
      t.equal(received.headers.accept, YANG_JSON)
      t.equal(received.headers.authorization, nso.authorization)
      t.same(Object.keys(received.headers).sort(), ['accept', 'authorization', 'connection', 'content-length', 'content-type', 'host'])
      t.same(JSON.parse(received.body), { 'tailf-ncs:device': [ce2] }, 'the body as JSON')
      t.same(nso.getData('tailf-ncs:devices/device=ce2'), ce2, 'created upstream')

      nso.received = []
      const again = await action(app, 'nso', { path: '/restconf/data/tailf-ncs:devices', accept: YANG_JSON }, { 'tailf-ncs:device': [ce2] })
      t.equal(again.statusCode, 502)
      t.same(again.json(), {
        statusCode: 502,
        error: 'Bad Gateway',
        message: 'Orchestrator adapter "nso" answered 409 Conflict',
        code: 'UPSTREAM_ERROR',
        upstream: { status: 409, body: restconfError('application', 'data-exists', 'object already exists') }
      })

      nso.received = []
      const patched = await action(app, 'nso',
        { path: '/restconf/data/tailf-ncs:devices/device=ce2', accept: YANG_JSON, method: 'patch', contentType: `${YANG_JSON}; charset=utf-8` },
        { 'tailf-ncs:device': [{ description: 'patched' }] })
      t.same(patched.json(), [{ result: '204' }])
      received = only(t, nso)
      t.equal(received.method, 'PATCH', 'method is case-insensitive')
      t.equal(received.headers['content-type'], `${YANG_JSON}; charset=utf-8`, 'contentType when given')
      t.same(nso.getData('tailf-ncs:devices/device=ce2'), { ...ce2, description: 'patched' }, 'merged')

      nso.received = []
      const replaced = await action(app, 'nso', { path: '/restconf/data/tailf-ncs:devices/device=ce2', accept: YANG_JSON, method: 'Put' },
        { 'tailf-ncs:device': [{ name: 'ce2', port: 22 }] })
      t.same(replaced.json(), [{ result: '204' }])
      t.equal(only(t, nso).method, 'PUT')
      t.same(nso.getData('tailf-ncs:devices/device=ce2'), { name: 'ce2', port: 22 }, 'replaced')
      const putCreated = await action(app, 'nso', { path: '/restconf/data/tailf-ncs:devices/device=ce3', accept: YANG_JSON, method: 'PUT' },
        { 'tailf-ncs:device': [{ name: 'ce3' }] })
      t.same(putCreated.json(), [{ result: '201' }], 'PUT creating')

      nso.received = []
      const read = await action(app, 'nso', { path: '/restconf/data/tailf-ncs:devices/device=ce2/port', accept: YANG_JSON, method: 'GET' },
        { ignored: true })
      t.same(read.json(), [{ result: '200', data: { 'tailf-ncs:port': 22 } }], 'JSON data parsed')
      received = only(t, nso)
      t.equal(received.method, 'GET')
      t.equal(received.body, '', 'GET sends no body')
      t.notOk('content-type' in received.headers)

      nso.received = []
      const deleted = await action(app, 'nso', { path: '/restconf/data/tailf-ncs:devices/device=ce2', accept: YANG_JSON, method: 'delete' },
        { ignored: true })
      t.same(deleted.json(), [{ result: '204' }])
      received = only(t, nso)
      t.equal(received.method, 'DELETE')
      t.equal(received.body, '', 'DELETE sends no body')
      t.notOk('content-type' in received.headers)
      t.equal(nso.getData('tailf-ncs:devices/device=ce2'), undefined, 'deleted upstream')

      const missing = await action(app, 'nso', { path: '/restconf/data/tailf-ncs:devices/device=ce2', accept: YANG_JSON, method: 'DELETE' })
      t.equal(missing.statusCode, 502)
      t.same(missing.json().upstream, { status: 404, body: restconfError('application', 'invalid-value', 'uri keypath not found') },
        'the ietf-restconf:errors document untouched')
    })

    t.test('restAction: actions answer 200 with tailf-ncs:output, JSON parsed and XML as text', async (t) => {
      const onDevice = await action(app, 'nso', { path: '/restconf/data/tailf-ncs:devices/device=ce0/check-sync', accept: YANG_JSON })
      t.same(onDevice.json(), [{ result: '200', data: { 'tailf-ncs:output': { result: 'in-sync' } } }])
      t.equal(only(t, nso).body, '{}', 'the empty body is sent')

      const operation = await action(app, 'nso', { path: '/restconf/operations/tailf-ncs:devices/sync-from', accept: YANG_JSON })
      t.same(operation.json(), [{ result: '200', data: { 'tailf-ncs:output': { 'sync-result': [{ device: 'ce0', result: true }, { device: 'ce1', result: true }] } } }])

      const withInput = await action(app, 'nso', { path: '/restconf/data/tailf-ncs:devices/device=ce1/connect', accept: YANG_JSON }, { input: {} })
      t.match(withInput.json(), [{ result: '200', data: { 'tailf-ncs:output': { result: true, info: /Connected to ce1/ } } }])

      const xml = await action(app, 'nso', { path: '/restconf/data/tailf-ncs:devices/device=ce0/check-sync', accept: YANG_XML, contentType: YANG_JSON })
      t.same(xml.json(), [{ result: '200', data: '<output xmlns="http://tail-f.com/ns/ncs"><result>in-sync</result></output>' }])

      const legacy = await action(app, 'nso', { path: '/api/running/devices/device/ce0/_operations/check-sync', accept: VND_DATA_JSON })
      t.same(legacy.json(), [{ result: '200', data: { 'tailf-ncs:output': { result: 'in-sync' } } }])
      t.equal(nso.received.at(-1)?.headers['content-type'], VND_DATA_JSON)
    })

    t.test('restAction with the legacy media types', async (t) => {
      const created = await action(app, 'nso', { path: '/api/running/devices', accept: VND_DATA_JSON, contentType: VND_DATA_JSON, method: 'POST' },
        { device: { name: 'ce4', address: '10.0.0.4' } })
      t.same(created.json(), [{ result: '201' }])
      t.equal(only(t, nso).headers['content-type'], VND_DATA_JSON)
      t.same(nso.getData('tailf-ncs:devices/device=ce4'), { name: 'ce4', address: '10.0.0.4' })

      const dup = await action(app, 'nso', { path: '/api/running/devices/device', accept: VND_DATA_JSON, contentType: VND_COLLECTION_JSON },
        { collection: { 'tailf-ncs:device': [{ name: 'ce4' }] } })
      t.equal(dup.statusCode, 502)
      t.same(dup.json().upstream, {
        status: 409,
        body: { errors: { error: [{ 'error-message': 'object already exists', 'error-urlpath': '/api/running/devices/device', 'error-tag': 'data-exists' }] } }
      })
      t.equal(nso.received.at(-1)?.headers['content-type'], VND_COLLECTION_JSON)

      const collection = await action(app, 'nso', { path: '/api/running/devices/device?deep', accept: VND_COLLECTION_XML, method: 'GET' })
      t.equal(collection.statusCode, 200)
      const [item] = collection.json() as Array<{ result: string, data: string }>
      t.equal(item?.result, '200')
      t.match(item?.data, /^<collection xmlns="http:\/\/tail-f.com\/ns\/rest"><device xmlns="http:\/\/tail-f.com\/ns\/ncs"><name>ce0<\/name>/, 'XML as text')
      t.equal(nso.received.at(-1)?.url, '/api/running/devices/device?deep')
    })

    t.test('bad parameters are a 400 and nothing goes upstream', async (t) => {
      const p = (over: Record<string, unknown>): Record<string, unknown> => ({ path: '/restconf/data', accept: YANG_JSON, ...over })
      const actionCases: Array<[unknown, RegExp]> = [
        [{ params: p({ path: 'http://evil.example/x' }), body: {} }, /^params\.path must not carry a scheme/],
        [{ params: p({ path: '//evil.example/x' }), body: {} }, /^params\.path must not carry an authority/],
        [{ params: p({ path: '/restconf/../../etc' }), body: {} }, /'\.\.' segments/],
        [{ params: p({ path: '/restconf/%2e%2e/x' }), body: {} }, /'\.\.' segments/],
        [{ params: p({ path: '/restconf/data\r\nX-Injected: 1' }), body: {} }, /control characters/],
        [{ params: p({ path: '/restconf/data%0d%0aX-Injected:%201' }), body: {} }, /encoded control characters/],
        [{ params: p({ path: 'restconf/data' }), body: {} }, /must start with '\/'/],
        [{ params: p({ path: '/x#frag' }), body: {} }, /fragment/],
        [{ params: p({ path: '' }), body: {} }, /must not be empty/],
        [{ params: p({ accept: 'application/json\r\nX-Injected: 1' }), body: {} }, /^params\.accept must not contain control characters/],
        [{ params: p({ accept: 'json' }), body: {} }, /^params\.accept must be a media type/],
        [{ params: p({ method: 'HEAD' }), body: {} }, /^params\.method must be one of GET, POST, PUT, PATCH, DELETE/],
        [{ params: p({ method: 'TRACE' }), body: {} }, /^params\.method/],
        [{ params: p({ contentType: 'text' }), body: {} }, /^params\.contentType must be a media type/],
        [{ params: p({ contentType: 'a/b\nX: 1' }), body: {} }, /^params\.contentType/],
        [{ params: p({ extra: 1 }), body: {} }, /must NOT have additional properties/],
        [{ params: p({}), body: {}, extra: 1 }, /must NOT have additional properties/],
        [{ params: p({}) }, /must have required property 'body'/],
        [{ body: {} }, /must have required property 'params'/],
        [{ params: { path: '/x' }, body: {} }, /must have required property 'accept'/],
        [{ params: { accept: YANG_JSON }, body: {} }, /must have required property 'path'/],
        [{ params: p({}), body: [] }, /body\/body must be object/],
        [{ params: p({}), body: 'text' }, /body\/body must be object/],
        [{ params: p({ path: 42 }), body: {} }, /body\/params\/path must be string/],
        [{ params: p({ method: 1 }), body: {} }, /body\/params\/method must be string/]
      ]
      for (const [payload, message] of actionCases) {
        const response = await app.inject({ method: 'POST', url: '/orchestrator_manager/restAction/nso', headers: { authorization: adminAuth }, payload: payload as object })
        t.equal(response.statusCode, 400, JSON.stringify(payload))
        t.match(response.json(), { statusCode: 400, error: 'Bad Request', message }, JSON.stringify(payload))
      }
      const queryCases: Array<[unknown, RegExp]> = [
        [{ params: p({ path: 'https://evil.example/' }) }, /^params\.path must not carry a scheme/],
        [{ params: p({ path: '/a/./b' }) }, /'\.\.' segments/],
        [{ params: p({ accept: 'application/json, text/plain' }) }, /^params\.accept must be a media type/],
        [{ params: p({ method: 'GET' }) }, /must NOT have additional properties/],
        [{ params: p({}), body: {} }, /must NOT have additional properties/],
        [{ params: { path: '/x' } }, /must have required property 'accept'/],
        [{}, /must have required property 'params'/]
      ]
      for (const [payload, message] of queryCases) {
        const response = await app.inject({ method: 'POST', url: '/orchestrator_manager/restQuery/nso', headers: { authorization: adminAuth }, payload: payload as object })
        t.equal(response.statusCode, 400, JSON.stringify(payload))
        t.match(response.json().message, message, JSON.stringify(payload))
      }
      const notJson = await app.inject({
        method: 'POST', url: '/orchestrator_manager/restQuery/nso', headers: { authorization: adminAuth, 'content-type': 'application/json' }, payload: '{"params":'
      })
      t.equal(notJson.statusCode, 400, 'malformed JSON')
      t.same(nso.received, [], 'the orchestrator received nothing at all')
    })

    t.test('unknown adapter: 404; invalid adapter id: 400; nothing upstream', async (t) => {
      const unknown = await query(app, 'nope', { path: '/restconf/data', accept: YANG_JSON })
      t.equal(unknown.statusCode, 404)
      t.same(unknown.json(), { statusCode: 404, error: 'Not Found', message: 'Orchestrator adapter "nope" not found', code: 'ADAPTER_NOT_FOUND' })
      t.equal((await action(app, 'nope', { path: '/restconf/data', accept: YANG_JSON })).statusCode, 404)
      t.equal((await query(app, 'bad..id%20', { path: '/restconf/data', accept: YANG_JSON })).statusCode, 400)
      t.equal((await query(app, 'nope', { path: 'http://evil/', accept: YANG_JSON })).statusCode, 400, 'parameters are checked first')
      t.same(nso.received, [])
      t.equal((await query(app, 'nso', { path: '/restconf/data', accept: YANG_JSON })).statusCode, 200, 'still serving')
    })

    t.test('only admins may relay', async (t) => {
      const designer = await createUser(app, { username: 'relay-designer', roles: ['designer', 'apiwrite'] })
      for (const url of ['/orchestrator_manager/restAction/nso', '/orchestrator_manager/restQuery/nso']) {
        const payload = url.includes('Action') ? { params: { path: '/restconf/data', accept: YANG_JSON }, body: {} } : { params: { path: '/restconf/data', accept: YANG_JSON } }
        t.equal((await app.inject({ method: 'POST', url, headers: { authorization: designer }, payload })).statusCode, 403)
        const anonymous = await app.inject({ method: 'POST', url, payload })
        t.equal(anonymous.statusCode, 401)
        t.match(anonymous.headers['www-authenticate'], /^Basic/)
      }
      t.same(nso.received, [])
    })

    t.test('upstream failures: 502 for error statuses, resets and dead ports, 504 on deadline; the service keeps serving', async (t) => {
      const ok = async (label: string): Promise<void> => {
        nso.mode = 'normal'
        const response = await query(app, 'nso', { path: '/restconf/data/tailf-ncs:devices/device=ce0/address', accept: YANG_JSON })
        t.equal(response.statusCode, 200, `a normal relay right after: ${label}`)
        t.same(response.json(), { 'tailf-ncs:address': '127.0.0.1' })
      }

      nso.mode = 'error'
      const failed = await action(app, 'nso', { path: '/restconf/data/tailf-ncs:devices/device=ce0/check-sync', accept: YANG_JSON })
      t.equal(failed.statusCode, 502)
      t.same(failed.json().upstream, { status: 500, body: restconfError('application', 'operation-failed', 'internal error') })
      const failedQuery = await query(app, 'nso', { path: '/restconf/data', accept: YANG_JSON })
      t.equal(failedQuery.statusCode, 502)
      t.equal(failedQuery.json().upstream.status, 500)
      await ok('500')

      await createAdapter(app, nsoAdapter('wrong-password', nso, { password: 'not-the-password' }))
      const denied = await query(app, 'wrong-password', { path: '/restconf/data', accept: YANG_JSON })
      t.equal(denied.statusCode, 502, 'the orchestrator refusing the adapter is not the caller\'s 401')
      t.same(denied.json().upstream, { status: 401, body: restconfError('protocol', 'access-denied', 'access denied') })
      t.notOk('www-authenticate' in denied.headers, 'no challenge passed on')
      await ok('401')

      nso.mode = 'reset'
      const reset = await action(app, 'nso', { path: '/restconf/data/tailf-ncs:devices/device=ce0/check-sync', accept: YANG_JSON })
      t.equal(reset.statusCode, 502)
      t.match(reset.json(), { code: 'UPSTREAM_UNREACHABLE', message: /^Could not reach orchestrator adapter "nso"/ })
      t.equal(nso.received.at(-1)?.method, 'POST', 'the request did reach the orchestrator')
      await ok('reset')

      await createAdapter(app, nsoAdapter('quick', nso, { timeoutMs: 300 }))
      nso.mode = 'hang'
      nso.received = []
      const hung = await action(app, 'quick', { path: '/restconf/data/tailf-ncs:devices/device=ce0/check-sync', accept: YANG_JSON })
      t.equal(hung.statusCode, 504)
      t.same(hung.json(), {
        statusCode: 504, error: 'Gateway Timeout', code: 'UPSTREAM_TIMEOUT', message: 'Orchestrator adapter "quick" did not answer within 300 ms'
      })
      t.equal(nso.received.length, 1, 'it was sent')
      await ok('hang')
      nso.mode = 'hang'
      t.equal((await query(app, 'quick', { path: '/restconf/data', accept: YANG_JSON })).statusCode, 504, 'restQuery too')
      nso.mode = 'normal'
      nso.delayMs = 5000
      t.equal((await query(app, 'quick', { path: '/restconf/data', accept: YANG_JSON })).statusCode, 504, 'a slow answer too')
      nso.delayMs = 0
      t.equal((await query(app, 'quick', { path: '/restconf/data', accept: YANG_JSON })).statusCode, 200, 'the same adapter right after')

      const dead = await startNsoServer()
      await dead.close()
      await createAdapter(app, nsoAdapter('down', dead))
      const down = await query(app, 'down', { path: '/restconf/data', accept: YANG_JSON })
      t.equal(down.statusCode, 502)
      t.match(down.json(), { code: 'UPSTREAM_UNREACHABLE', message: /ECONNREFUSED/ })
      await ok('down')
    })

    t.test('the base path of the adapter prefixes every relayed path', async (t) => {
      await createAdapter(app, nsoAdapter('prefixed', nso, { baseUrl: `${nso.url}/prefix/` }))
      const response = await query(app, 'prefixed', { path: '/restconf/data/tailf-ncs:devices?depth=1', accept: YANG_JSON })
      t.equal(response.statusCode, 502, 'the fixture has nothing under /prefix')
      t.equal(only(t, nso).url, '/prefix/restconf/data/tailf-ncs:devices?depth=1')
    })

    t.test('changing an adapter here rebuilds its pool; deleting it closes the pool', async (t) => {
      const other = await startNso(t)
      await createAdapter(app, nsoAdapter('moving', nso))
      t.equal((await query(app, 'moving', { path: '/restconf/data', accept: YANG_JSON })).statusCode, 200)
      const before = app.orchestrator.poolOf('moving')
      t.ok(before, 'a pool per adapter')
      t.equal(before?.closed, false)

      const put = await app.inject({ method: 'PUT', url: '/orchestrator_manager/adapters/moving', headers: { authorization: adminAuth }, payload: { baseUrl: other.url } })
      t.equal(put.statusCode, 200)
      t.equal(before?.closed, true, 'the old pool is closed at once')
      t.equal((await query(app, 'moving', { path: '/restconf/data', accept: YANG_JSON })).statusCode, 200)
      t.equal(other.received.length, 1, 'the next call goes to the new base URL')
      t.equal(nso.received.length, 1, 'and not to the old one')
      const after = app.orchestrator.poolOf('moving')
      t.not(after, before)

      await app.inject({ method: 'PUT', url: '/orchestrator_manager/adapters/moving', headers: { authorization: adminAuth }, payload: { password: 'wrong-now' } })
      const refused = await query(app, 'moving', { path: '/restconf/data', accept: YANG_JSON })
      t.equal(refused.json().upstream.status, 401, 'a new password is used at once')

      const deleted = await app.inject({ method: 'DELETE', url: '/orchestrator_manager/adapters/moving', headers: { authorization: adminAuth } })
      t.equal(deleted.statusCode, 200)
      t.equal(app.orchestrator.poolOf('moving'), undefined)
      t.equal(after?.closed, true, 'closed on delete')
      t.equal((await query(app, 'moving', { path: '/restconf/data', accept: YANG_JSON })).statusCode, 404)
    })

    t.test('a cached adapter costs no database round trip', async (t) => {
      await query(app, 'nso', { path: '/restconf/data', accept: YANG_JSON })
      const original = app.db.query.bind(app.db)
      const seen: string[] = []
      app.db.query = async (text, params) => { seen.push(text); return await original(text, params) }
      t.teardown(() => { app.db.query = original })
      for (let i = 0; i < 5; i++) t.equal((await query(app, 'nso', { path: '/restconf/data', accept: YANG_JSON })).statusCode, 200)
      t.same(seen.filter((q) => q.includes('orchestrator_adapters')), [], 'the adapter row came from the cache')
      t.equal(nso.received.length, 6)
    })
  })
}
