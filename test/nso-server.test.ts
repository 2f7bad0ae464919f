import t from 'tap'
import { request, type Dispatcher } from 'undici'
import { seedDatastore, startNsoServer, type NsoServer } from './fixtures/nso-server.js'

// All a helper needs from a tap test: a place to register clean-up.
type Test = { teardown(fn: () => unknown): void }

const YANG_JSON = 'application/yang-data+json'

async function start (t: Test, opts?: Parameters<typeof startNsoServer>[0]): Promise<NsoServer> {
  const nso = await startNsoServer(opts)
  t.teardown(() => nso.close())
  return nso
}

interface CallOptions {
  accept?: string;
  contentType?: string;
  body?: unknown;
  authorization?: string | null;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

interface Answer {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  text: string;
  json(): unknown;
}

// One request with the fixture's credentials unless told otherwise; always drains the body.
async function call (nso: NsoServer, method: Dispatcher.HttpMethod, path: string, opts: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers }
  const authorization = opts.authorization === undefined ? nso.authorization : opts.authorization
  if (authorization !== null) headers.authorization = authorization
  if (opts.accept !== undefined) headers.accept = opts.accept
  let body: string | undefined
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body)
    headers['content-type'] = opts.contentType ?? YANG_JSON
  }
  const res = await request(nso.url + path, { method, headers, body, signal: opts.signal })
  const text = await res.body.text()
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) as unknown }
}

const restconfError = (type: string, tag: string, message: string): unknown => ({
  'ietf-restconf:errors': { error: [{ 'error-type': type, 'error-tag': tag, 'error-message': message }] },
})
const KEYPATH_NOT_FOUND = restconfError('application', 'invalid-value', 'uri keypath not found')

function errorCode (err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined
  const { code, cause } = err as { code?: unknown; cause?: unknown }
  if (typeof code === 'string') return code
  return cause === undefined ? undefined : errorCode(cause)
}

async function until (condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

t.test('Basic auth', async (t) => {
  const nso = await start(t)
  for (const [label, authorization] of [
    ['missing', null],
    ['wrong password', `Basic ${Buffer.from('admin:nope').toString('base64')}`],
    ['wrong user', `Basic ${Buffer.from('root:admin').toString('base64')}`],
    ['not Basic', 'Bearer abc'],
    ['garbage', 'Basic !!!'],
  ] as const) {
    const res = await call(nso, 'GET', '/restconf/data/tailf-ncs:devices', { authorization })
    t.equal(res.status, 401, `${label}: 401`)
    t.equal(res.headers['www-authenticate'], 'Basic realm="restconf"', `${label}: challenge`)
    t.equal(res.headers['content-type'], YANG_JSON)
    t.same(res.json(), restconfError('protocol', 'access-denied', 'access denied'), `${label}: errors body`)
  }
  const ok = await call(nso, 'GET', '/restconf/data/tailf-ncs:devices')
  t.equal(ok.status, 200, 'default admin/admin works')

  const custom = await start(t, { username: 'relay', password: 's3cret:with:colons' })
  t.equal(custom.authorization, `Basic ${Buffer.from('relay:s3cret:with:colons').toString('base64')}`)
  t.equal((await call(custom, 'GET', '/restconf/data', { authorization: nso.authorization })).status, 401, 'admin/admin refused')
  t.equal((await call(custom, 'GET', '/restconf/data')).status, 200, 'own credentials accepted')
  const legacy = await call(custom, 'GET', '/api/running/devices', { authorization: null, accept: 'application/vnd.yang.data+json' })
  t.equal(legacy.status, 401, 'legacy API is protected too')
})

t.test('RESTCONF GET', async (t) => {
  const nso = await start(t)
  const seed = seedDatastore()

  const all = await call(nso, 'GET', '/restconf/data', { accept: YANG_JSON })
  t.equal(all.status, 200)
  t.equal(all.headers['content-type'], YANG_JSON)
  t.same(all.json(), { 'ietf-restconf:data': seed })

  const devices = await call(nso, 'GET', '/restconf/data/tailf-ncs:devices', { accept: YANG_JSON })
  t.same(devices.json(), { 'tailf-ncs:devices': seed['tailf-ncs:devices'] })

  const ce0 = await call(nso, 'GET', '/restconf/data/tailf-ncs:devices/device=ce0?depth=2', { accept: YANG_JSON })
  t.equal(ce0.status, 200, 'depth accepted')
  const entry = ce0.json() as { 'tailf-ncs:device': Array<Record<string, unknown>> }
  t.equal(entry['tailf-ncs:device'].length, 1, 'a list entry comes as a one-element array')
  t.equal(entry['tailf-ncs:device'][0].name, 'ce0')
  t.equal(entry['tailf-ncs:device'][0].address, '127.0.0.1')

  const leaf = await call(nso, 'GET', '/restconf/data/tailf-ncs:devices/device=ce1/config/tailf-ned-cisco-ios:hostname')
  t.same(leaf.json(), { 'tailf-ned-cisco-ios:hostname': 'ce1' }, 'leaf in another module is qualified')

  const encoded = await call(
    nso,
    'GET',
    '/restconf/data/tailf-ncs:devices/device=ce0/config/tailf-ned-cisco-ios:interface/GigabitEthernet=0%2F1?content=config',
    { accept: YANG_JSON }
  )
  t.equal(encoded.status, 200, 'percent-encoded key and content= accepted')
  t.same(encoded.json(), { 'tailf-ned-cisco-ios:GigabitEthernet': [{ name: '0/1', description: 'to core' }] })

  const wildcard = await call(nso, 'GET', '/restconf/data/tailf-ncs:devices/device=ce0/port', { accept: '*/*' })
  t.equal(wildcard.headers['content-type'], YANG_JSON, '*/* gets JSON')
  t.same(wildcard.json(), { 'tailf-ncs:port': 10022 })
  const noAccept = await call(nso, 'GET', '/restconf/data/tailf-ncs:devices/device=ce0/port')
  t.equal(noAccept.headers['content-type'], YANG_JSON, 'no Accept gets JSON')

  const xml = await call(nso, 'GET', '/restconf/data/tailf-ncs:devices/device=ce0/address', {
    accept: 'application/yang-data+xml',
  })
  t.equal(xml.status, 200)
  t.equal(xml.headers['content-type'], 'application/yang-data+xml')
  t.equal(xml.text, '<address xmlns="http://tail-f.com/ns/ncs">127.0.0.1</address>')

  for (const path of [
    '/restconf/data/tailf-ncs:devices/device=ce9',
    '/restconf/data/tailf-ncs:devices/device=ce0/nothing-here',
    '/restconf/data/tailf-ncs:nope',
    '/restconf/data/tailf-ncs:devices/device/name',
  ]) {
    const missing = await call(nso, 'GET', path, { accept: YANG_JSON })
    t.equal(missing.status, 404, `${path}: 404`)
    t.equal(missing.headers['content-type'], YANG_JSON)
    t.same(missing.json(), KEYPATH_NOT_FOUND, `${path}: errors body`)
  }

  const badDepth = await call(nso, 'GET', '/restconf/data/tailf-ncs:devices?depth=0')
  t.equal(badDepth.status, 400, 'depth=0 is invalid')
  t.same(badDepth.json(), restconfError('protocol', 'invalid-value', "invalid value for query parameter 'depth'"))
  t.equal((await call(nso, 'GET', '/restconf/data/tailf-ncs:devices?content=bogus')).status, 400, 'content=bogus is invalid')
  t.equal((await call(nso, 'GET', '/restconf/data/tailf-ncs:devices?depth=unbounded')).status, 200)

  const root = await call(nso, 'GET', '/restconf')
  t.equal(root.status, 200)
  t.match(root.json(), { 'ietf-restconf:restconf': { data: {}, operations: {} } })
})

t.test('RESTCONF POST creates, 409 when the node exists', async (t) => {
  const nso = await start(t)
  const ce2 = { name: 'ce2', address: '10.1.1.2', port: 10024, authgroup: 'default' }
  const created = await call(nso, 'POST', '/restconf/data/tailf-ncs:devices', { body: { 'tailf-ncs:device': [ce2] } })
  t.equal(created.status, 201)
  t.equal(created.text, '', 'no body')
  t.equal(created.headers.location, '/restconf/data/tailf-ncs:devices/device=ce2')
  t.same(nso.getData('tailf-ncs:devices/device=ce2'), ce2, 'stored')

  const again = await call(nso, 'POST', '/restconf/data/tailf-ncs:devices', { body: { 'tailf-ncs:device': [ce2] } })
  t.equal(again.status, 409)
  t.equal(again.headers['content-type'], YANG_JSON)
  t.same(again.json(), restconfError('application', 'data-exists', 'object already exists'))

  const child = await call(nso, 'POST', '/restconf/data/tailf-ncs:devices/device=ce2', { body: { description: 'lab' } })
  t.equal(child.status, 201, 'a leaf under an entry')
  t.equal(child.headers.location, '/restconf/data/tailf-ncs:devices/device=ce2/description')
  t.equal(nso.getData('tailf-ncs:devices/device=ce2/description'), 'lab')
  const childAgain = await call(nso, 'POST', '/restconf/data/tailf-ncs:devices/device=ce2', { body: { description: 'x' } })
  t.equal(childAgain.status, 409)
  t.match(childAgain.json(), { 'ietf-restconf:errors': { error: [{ 'error-tag': 'data-exists' }] } })

  const noParent = await call(nso, 'POST', '/restconf/data/tailf-ncs:devices/device=ce9', { body: { description: 'x' } })
  t.equal(noParent.status, 404, 'parent must exist')

  const badJson = await call(nso, 'POST', '/restconf/data/tailf-ncs:devices', { body: '{not json' })
  t.equal(badJson.status, 400)
  t.match(badJson.json(), { 'ietf-restconf:errors': { error: [{ 'error-tag': 'malformed-message' }] } })

  const noKey = await call(nso, 'POST', '/restconf/data/tailf-ncs:devices', { body: { 'tailf-ncs:device': [{ address: 'x' }] } })
  t.equal(noKey.status, 400, 'a list entry needs its key')

  const xmlBody = await call(nso, 'POST', '/restconf/data/tailf-ncs:devices', {
    body: '<device><name>ce5</name></device>',
    contentType: 'application/yang-data+xml',
  })
  t.equal(xmlBody.status, 415, 'only JSON bodies')
})

t.test('RESTCONF PUT creates (201) and replaces (204)', async (t) => {
  const nso = await start(t)
  const path = '/restconf/data/tailf-ncs:devices/device=ce3'
  const created = await call(nso, 'PUT', path, { body: { 'tailf-ncs:device': [{ name: 'ce3', address: '10.0.0.3' }] } })
  t.equal(created.status, 201)
  t.same(nso.getData('tailf-ncs:devices/device=ce3'), { name: 'ce3', address: '10.0.0.3' })

  const replaced = await call(nso, 'PUT', path, { body: { 'tailf-ncs:device': [{ name: 'ce3', port: 22 }] } })
  t.equal(replaced.status, 204)
  t.equal(replaced.text, '')
  t.same(nso.getData('tailf-ncs:devices/device=ce3'), { name: 'ce3', port: 22 }, 'replaced, not merged')

  const leaf = await call(nso, 'PUT', '/restconf/data/tailf-ncs:devices/device=ce0/address', { body: { 'tailf-ncs:address': '192.0.2.1' } })
  t.equal(leaf.status, 204, 'replace a leaf')
  t.equal(nso.getData('tailf-ncs:devices/device=ce0/address'), '192.0.2.1')

  const keyMismatch = await call(nso, 'PUT', path, { body: { 'tailf-ncs:device': [{ name: 'other' }] } })
  t.equal(keyMismatch.status, 400, 'key in body must match the uri')
  const wrongNode = await call(nso, 'PUT', path, { body: { 'tailf-ncs:devices': {} } })
  t.equal(wrongNode.status, 400, 'body node must match the target')
  const noBody = await call(nso, 'PUT', path)
  t.equal(noBody.status, 400, 'body required')
  const noParent = await call(nso, 'PUT', '/restconf/data/tailf-ncs:devices/device=ce9/config/x', { body: { x: 1 } })
  t.equal(noParent.status, 404, 'parent must exist')
})

t.test('RESTCONF PATCH merges (204)', async (t) => {
  const nso = await start(t)
  const res = await call(nso, 'PATCH', '/restconf/data/tailf-ncs:devices/device=ce0', {
    body: {
      'tailf-ncs:device': [
        {
          description: 'patched',
          config: {
            'tailf-ned-cisco-ios:interface': { GigabitEthernet: [{ name: '0/1', description: 'to edge' }, { name: '0/3' }] },
          },
        },
      ],
    },
  })
  t.equal(res.status, 204)
  t.equal(res.text, '')
  const ce0 = nso.getData('tailf-ncs:devices/device=ce0') as Record<string, unknown>
  t.equal(ce0.description, 'patched', 'new leaf')
  t.equal(ce0.address, '127.0.0.1', 'old leaf kept')
  t.same(nso.getData('tailf-ncs:devices/device=ce0/config/tailf-ned-cisco-ios:interface/GigabitEthernet=0%2F1'), {
    name: '0/1',
    description: 'to edge',
  })
  t.same(nso.getData('tailf-ncs:devices/device=ce0/config/tailf-ned-cisco-ios:interface/GigabitEthernet=0%2F2'), {
    name: '0/2',
    shutdown: [null],
  })
  t.same(nso.getData('tailf-ncs:devices/device=ce0/config/tailf-ned-cisco-ios:interface/GigabitEthernet=0%2F3'), { name: '0/3' })

  const missing = await call(nso, 'PATCH', '/restconf/data/tailf-ncs:devices/device=ce9', { body: { 'tailf-ncs:device': [{}] } })
  t.equal(missing.status, 404)
  t.same(missing.json(), KEYPATH_NOT_FOUND)
})

t.test('RESTCONF DELETE (204, 404 when missing)', async (t) => {
  const nso = await start(t)
  const path = '/restconf/data/tailf-ncs:devices/device=ce1'
  const deleted = await call(nso, 'DELETE', path)
  t.equal(deleted.status, 204)
  t.equal(nso.getData('tailf-ncs:devices/device=ce1'), undefined)
  t.ok(nso.getData('tailf-ncs:devices/device=ce0'), 'the other entry stays')
  const again = await call(nso, 'DELETE', path)
  t.equal(again.status, 404)
  t.same(again.json(), KEYPATH_NOT_FOUND)
  t.equal((await call(nso, 'DELETE', '/restconf/data/tailf-ncs:devices/device=ce0/config')).status, 204, 'a container')
  t.equal(nso.getData('tailf-ncs:devices/device=ce0/config'), undefined)

  t.equal((await call(nso, 'OPTIONS', path)).status, 405, 'other methods are refused')
})

t.test('RESTCONF actions and operations', async (t) => {
  const nso = await start(t)
  const onDevice = await call(nso, 'POST', '/restconf/data/tailf-ncs:devices/device=ce0/check-sync', { accept: YANG_JSON })
  t.equal(onDevice.status, 200)
  t.equal(onDevice.headers['content-type'], YANG_JSON)
  t.same(onDevice.json(), { 'tailf-ncs:output': { result: 'in-sync' } })

  const withInput = await call(nso, 'POST', '/restconf/data/tailf-ncs:devices/device=ce1/connect', { body: { input: {} } })
  t.same(withInput.json(), { 'tailf-ncs:output': { result: true, info: '(admin) Connected to ce1 - 127.0.0.1:10023' } })

  const operation = await call(nso, 'POST', '/restconf/operations/tailf-ncs:devices/check-sync')
  t.equal(operation.status, 200)
  t.same(operation.json(), {
    'tailf-ncs:output': {
      'sync-result': [
        { device: 'ce0', result: 'in-sync' },
        { device: 'ce1', result: 'in-sync' },
      ],
    },
  })
  const syncFrom = await call(nso, 'POST', '/restconf/data/tailf-ncs:devices/sync-from')
  t.same(syncFrom.json(), { 'tailf-ncs:output': { 'sync-result': [{ device: 'ce0', result: true }, { device: 'ce1', result: true }] } })

  const xml = await call(nso, 'POST', '/restconf/data/tailf-ncs:devices/device=ce0/check-sync', { accept: 'application/yang-data+xml' })
  t.equal(xml.headers['content-type'], 'application/yang-data+xml')
  t.equal(xml.text, '<output xmlns="http://tail-f.com/ns/ncs"><result>in-sync</result></output>')

  t.equal((await call(nso, 'GET', '/restconf/operations/tailf-ncs:devices/check-sync')).status, 405, 'actions need POST')
  t.equal((await call(nso, 'POST', '/restconf/data/tailf-ncs:devices/device=ce9/check-sync')).status, 404, 'on a missing device')
  t.equal((await call(nso, 'POST', '/restconf/operations/tailf-ncs:reboot-the-world')).status, 404, 'unknown operation')
})

t.test('legacy /api media types', async (t) => {
  const nso = await start(t)
  const seed = seedDatastore()
  const devices = seed['tailf-ncs:devices'] as { device: unknown[] }

  const data = await call(nso, 'GET', '/api/running/devices/device/ce0?deep', { accept: 'application/vnd.yang.data+json' })
  t.equal(data.status, 200)
  t.equal(data.headers['content-type'], 'application/vnd.yang.data+json')
  t.same(data.json(), { 'tailf-ncs:device': devices.device[0] })

  const leaf = await call(nso, 'GET', '/api/operational/devices/device/ce1/address', { accept: 'application/vnd.yang.data+json' })
  t.same(leaf.json(), { 'tailf-ncs:address': '127.0.0.1' }, 'operational datastore')

  const collection = await call(nso, 'GET', '/api/running/devices/device?deep', { accept: 'application/vnd.yang.collection+json' })
  t.equal(collection.status, 200)
  t.equal(collection.headers['content-type'], 'application/vnd.yang.collection+json')
  t.same(collection.json(), { collection: { 'tailf-ncs:device': devices.device } })

  const xml = await call(nso, 'GET', '/api/running/devices/device/ce1/config/interface/GigabitEthernet', {
    accept: 'application/vnd.yang.collection+xml',
  })
  t.equal(xml.status, 200)
  t.equal(xml.headers['content-type'], 'application/vnd.yang.collection+xml')
  t.equal(
    xml.text,
    '<collection xmlns="http://tail-f.com/ns/rest">' +
      '<GigabitEthernet xmlns="urn:ios"><name>0/1</name><description>to core</description></GigabitEthernet>' +
      '<GigabitEthernet xmlns="urn:ios"><name>0/2</name><shutdown/></GigabitEthernet>' +
      '</collection>'
  )

  const action = await call(nso, 'POST', '/api/running/devices/device/ce0/_operations/check-sync', {
    accept: 'application/vnd.yang.data+json',
  })
  t.equal(action.status, 200)
  t.same(action.json(), { 'tailf-ncs:output': { result: 'in-sync' } })

  const created = await call(nso, 'POST', '/api/running/devices', {
    accept: 'application/vnd.yang.data+json',
    contentType: 'application/vnd.yang.data+json',
    body: { device: { name: 'ce4', address: '10.0.0.4' } },
  })
  t.equal(created.status, 201)
  t.same(nso.getData('tailf-ncs:devices/device=ce4'), { name: 'ce4', address: '10.0.0.4' })
  const dup = await call(nso, 'POST', '/api/running/devices/device', {
    contentType: 'application/vnd.yang.collection+json',
    body: { collection: { 'tailf-ncs:device': [{ name: 'ce4' }] } },
  })
  t.equal(dup.status, 409, 'collection body on the list')
  t.same(dup.json(), {
    errors: { error: [{ 'error-message': 'object already exists', 'error-urlpath': '/api/running/devices/device', 'error-tag': 'data-exists' }] },
  })

  const missing = await call(nso, 'GET', '/api/running/devices/device/ce9')
  t.equal(missing.status, 404)
  t.equal(missing.headers['content-type'], 'application/vnd.yang.data+json')
  t.match(missing.json(), { errors: { error: [{ 'error-tag': 'invalid-value', 'error-urlpath': '/api/running/devices/device/ce9' }] } })

  const readOnly = await call(nso, 'DELETE', '/api/operational/devices/device/ce0')
  t.equal(readOnly.status, 405, 'operational is read-only')
  t.equal((await call(nso, 'GET', '/api')).status, 200, 'API root')
})

t.test('406 for unsupported Accept, 404 for unknown top-level paths', async (t) => {
  const nso = await start(t)
  const restconf = await call(nso, 'GET', '/restconf/data/tailf-ncs:devices', { accept: 'application/vnd.yang.data+json' })
  t.equal(restconf.status, 406)
  t.equal(restconf.headers['content-type'], YANG_JSON)
  t.same(restconf.json(), restconfError('protocol', 'invalid-value', 'unsupported media type in Accept'))
  t.equal((await call(nso, 'GET', '/restconf/data', { accept: 'text/html' })).status, 406)

  const legacy = await call(nso, 'GET', '/api/running/devices', { accept: 'application/yang-data+json' })
  t.equal(legacy.status, 406)
  t.match(legacy.json(), { errors: { error: [{ 'error-message': 'unsupported media type in Accept' }] } })

  const list = await call(nso, 'GET', '/restconf/data/tailf-ncs:devices/device=ce0/port', {
    accept: 'text/html, application/yang-data+json;q=0.9',
  })
  t.equal(list.status, 200, 'any acceptable type in a list will do')

  for (const path of ['/', '/foo', '/restconf/nothing', '/.well-known/host-meta']) {
    const res = await call(nso, 'GET', path)
    t.equal(res.status, 404, `${path}: 404`)
    t.same(res.json(), KEYPATH_NOT_FOUND, `${path}: errors body`)
  }
  const legacyUnknown = await call(nso, 'GET', '/api/nothing')
  t.equal(legacyUnknown.status, 404, 'unknown path under /api')
  t.same(legacyUnknown.json(), {
    errors: { error: [{ 'error-message': 'uri keypath not found', 'error-urlpath': '/api/nothing', 'error-tag': 'invalid-value' }] },
  })
})

t.test('received records method, path with query, headers and body', async (t) => {
  const nso = await start(t)
  const body = { 'tailf-ncs:device': [{ name: 'ce7' }] }
  await call(nso, 'POST', '/restconf/data/tailf-ncs:devices?with-defaults=report-all', {
    accept: YANG_JSON,
    body,
    headers: { 'x-request-id': 'abc-123' },
  })
  await call(nso, 'GET', '/api/running/devices?deep', { accept: 'application/vnd.yang.data+json', authorization: null })
  t.equal(nso.received.length, 2, 'unauthorised requests are recorded too')
  const [first, second] = nso.received
  t.equal(first.method, 'POST')
  t.equal(first.url, '/restconf/data/tailf-ncs:devices?with-defaults=report-all')
  t.equal(first.headers.accept, YANG_JSON)
  t.equal(first.headers['content-type'], YANG_JSON)
  t.equal(first.headers.authorization, nso.authorization)
  t.equal(first.headers['x-request-id'], 'abc-123')
  t.equal(first.body, JSON.stringify(body))
  t.same(JSON.parse(first.body), body)
  t.equal(second.method, 'GET')
  t.equal(second.url, '/api/running/devices?deep')
  t.equal(second.headers.authorization, undefined)
  t.equal(second.body, '')

  nso.mode = 'hang'
  nso.delayMs = 10
  nso.reset()
  t.same(nso.received, [], 'reset() forgets requests')
  t.equal(nso.mode, 'normal')
  t.equal(nso.delayMs, 0)
  t.equal(nso.getData('tailf-ncs:devices/device=ce7'), undefined, 'reset() restores the seed')
  t.same(nso.data, seedDatastore())
})

t.test('hang mode: the client times out, close() ends hanging sockets', async (t) => {
  const nso = await start(t)
  nso.mode = 'hang'
  const started = Date.now()
  const err = await call(nso, 'GET', '/restconf/data/tailf-ncs:devices', { signal: AbortSignal.timeout(200) }).then(
    () => undefined,
    (e: unknown) => e
  )
  t.ok(err instanceof Error, 'request rejected')
  t.equal((err as Error).name, 'TimeoutError', 'by the AbortSignal timeout')
  t.ok(Date.now() - started >= 190, 'not before the timeout')
  t.equal(nso.received.length, 1, 'the request arrived')
  t.equal(nso.received[0].url, '/restconf/data/tailf-ncs:devices')

  // No client timeout this time: only close() can end the request.
  const pending = call(nso, 'POST', '/restconf/data/tailf-ncs:devices/device=ce0/check-sync', { body: {} }).then(
    () => undefined,
    (e: unknown) => e
  )
  await until(() => nso.received.length === 2)
  t.equal(nso.received[1].body, '{}', 'body read before hanging')
  const closing = Date.now()
  await nso.close()
  t.ok(Date.now() - closing < 1000, 'close() does not wait for the hanging request')
  t.equal(errorCode(await pending), 'UND_ERR_SOCKET', 'the hanging request sees its socket closed')
  t.equal(nso.listening, false)
})

t.test('reset mode: socket destroyed on arrival', async (t) => {
  const nso = await start(t)
  nso.mode = 'reset'
  const err = await call(nso, 'GET', '/restconf/data/tailf-ncs:devices').then(
    () => undefined,
    (e: unknown) => e
  )
  t.ok(err instanceof Error, 'request rejected')
  t.equal(errorCode(err), 'UND_ERR_SOCKET', 'socket error')
  t.equal(nso.received.length, 1, 'recorded')
  t.equal(nso.received[0].method, 'GET')

  nso.mode = 'normal'
  t.equal((await call(nso, 'GET', '/restconf/data/tailf-ncs:devices')).status, 200, 'back to normal at run time')
})

t.test('error mode: 500 operation-failed, after auth', async (t) => {
  const nso = await start(t)
  nso.mode = 'error'
  const res = await call(nso, 'GET', '/restconf/data/tailf-ncs:devices')
  t.equal(res.status, 500)
  t.same(res.json(), restconfError('application', 'operation-failed', 'internal error'))
  t.equal((await call(nso, 'GET', '/restconf/data', { authorization: null })).status, 401)
  const legacy = await call(nso, 'GET', '/api/running/devices')
  t.equal(legacy.status, 500)
  t.match(legacy.json(), { errors: { error: [{ 'error-tag': 'operation-failed' }] } })
})

t.test('delayMs: slow answers, client timeouts, close() while waiting', async (t) => {
  const nso = await start(t)
  nso.delayMs = 150
  const started = Date.now()
  const slow = await call(nso, 'GET', '/restconf/data/tailf-ncs:devices/device=ce0/port')
  t.equal(slow.status, 200)
  t.ok(Date.now() - started >= 140, 'answer delayed')

  const err = await call(nso, 'GET', '/restconf/data', { signal: AbortSignal.timeout(50) }).then(
    () => undefined,
    (e: unknown) => e
  )
  t.equal((err as Error).name, 'TimeoutError', 'a shorter client timeout wins')

  nso.delayMs = 10_000
  const pending = call(nso, 'GET', '/restconf/data').then(
    () => undefined,
    (e: unknown) => e
  )
  await until(() => nso.received.length === 3)
  const closing = Date.now()
  await nso.close()
  t.ok(Date.now() - closing < 1000, 'close() does not wait for the delay')
  t.equal(errorCode(await pending), 'UND_ERR_SOCKET')
})

t.test('dead port: ECONNREFUSED after close()', async (t) => {
  const nso = await start(t)
  t.equal(nso.listening, true)
  t.match(nso.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  await nso.close()
  await nso.close() // idempotent
  t.equal(nso.listening, false)
  t.equal(nso.url, `http://127.0.0.1:${nso.port}`, 'url kept')
  const err = await call(nso, 'GET', '/restconf/data').then(
    () => undefined,
    (e: unknown) => e
  )
  t.equal(errorCode(err), 'ECONNREFUSED')
})
