// The platform's NSO Manager operations against two NSO stand-ins (test/fixtures/nso-server.ts),
// at both prefixes: RESTCONF and JSON-RPC calls, NSO 5.3 and 6.1 answers, devices looked for
// across adapters, failures of one adapter, deadlines, oversized answers, sessions logged out.
// Over 300 lines: one app and two stand-ins shared by every case.
import t from 'tap'
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node'
import { adminAuth, buildTestApp, createUser, type TestApp } from '../../helper.js'
import { seedDatastore, type JsonObject, type NsoServer } from '../../fixtures/nso-server.js'
import { createAdapter, nsoAdapter, startNso } from '../../helpers/nso.js'
import { OPERATION_ANSWER_MAX_BYTES } from '../../../plugins/orchestrator/client.js'

const PREFIXES = ['/orchestrator_manager', '/nso_manager']
const IOS = 'cisco-ios-cli-6.44:cisco-ios-cli-6.44'
const XR = 'cisco-iosxr-cli-7.38:cisco-iosxr-cli-7.38'
const NX = 'cisco-nx-cli-5.23:cisco-nx-cli-5.23'

const device = (name: string, ned: string): JsonObject => ({
  name, address: '127.0.0.1', port: 22, authgroup: 'lab', 'device-type': { cli: { 'ned-id': ned } }, state: { 'admin-state': 'unlocked' }
})

// Adapter "a-lab": the seed's ce0 and ce1 (IOS). Adapter "b-lab": an XR, an NX-OS, a name with a '/'
// and a space, a second ce0, two templates, other NEDs and auth groups.
function dataA (): JsonObject {
  const seed = seedDatastore()
  const devices = seed['tailf-ncs:devices'] as JsonObject
  devices['ned-ids'] = { 'ned-id': [{ id: IOS }, { id: 'cisco-asa-cli-6.16:cisco-asa-cli-6.16' }] }
  return seed
}
function dataB (): JsonObject {
  return {
    'tailf-ncs:devices': {
      authgroups: { group: [{ name: 'lab' }, { name: 'default' }] },
      'ned-ids': { 'ned-id': [{ id: XR }, { id: NX }, { id: IOS }] },
      device: [device('pe0', XR), device('nx0', NX), device('core/rtr 1', IOS), device('CE0', IOS)],
      template: [{ name: 'ntp', 'ned-id': [{ id: XR }] }, { name: 'banner' }]
    }
  }
}

t.test('NSO Manager operations', async (t) => {
  const exporter = new InMemorySpanExporter()
  const app: TestApp = await buildTestApp(t, {
    database: 'any',
    env: { ORCHESTRATOR_ADAPTER_CACHE_TTL_MS: '60000' },
    tracing: { spanProcessor: new SimpleSpanProcessor(exporter) }
  })
  const a = await startNso(t, { data: dataA() })
  const b = await startNso(t, { data: dataB() })
  await createAdapter(app, nsoAdapter('a-lab', a, { timeoutMs: 1000 }))
  await createAdapter(app, nsoAdapter('b-lab', b, { timeoutMs: 1000 }))
  t.beforeEach(() => { a.reset(); b.reset(); exporter.reset() })

  const call = async (method: 'GET' | 'POST', url: string, payload?: object, authorization = adminAuth) => {
    const response = await app.inject({ method, url, headers: { authorization }, ...(payload === undefined ? {} : { payload }) })
    return { status: response.statusCode, body: response.json() as any }
  }
  const sent = (nso: NsoServer) => nso.received.filter((r) => r.url !== '/jsonrpc').map((r) => `${r.method} ${r.url}`)
  const auditOf = async (action: string) => {
    await app.audit.flush()
    const { rows } = await app.db.query<{ target: string, status: number, details: Record<string, unknown> | null }>(
      'SELECT target, status, details FROM audit_events WHERE action = $1 ORDER BY id DESC LIMIT 1', [action])
    return rows[0]
  }

  for (const prefix of PREFIXES) {
    t.test(`${prefix}: runAction is login, new_trans (read), run_action, logout; NSO's result as it came`, async (t) => {
      b.flavour = 'nso-6.1'
      const { status, body } = await call('POST', `${prefix}/runAction/b-lab`, { path: '/ncs:devices/device{pe0}/connect', params: {} })
      t.equal(status, 200)
      t.same(body, { result: [{ name: 'result', value: 'true' }, { name: 'info', value: '(admin) Connected to pe0 - 127.0.0.1:22' }] })
      t.same(b.jsonRpcCalls.map((c) => c.method), ['login', 'new_trans', 'run_action', 'logout'])
      t.ok(b.jsonRpcCalls.slice(1).every((c) => c.session !== undefined), 'each call after login in its session')
      t.equal(b.openJsonRpcSessions, 0, 'logged out')
      const login = JSON.parse(b.received[0]?.body ?? '{}') as Record<string, any>
      t.same(login.params, { user: b.username, passwd: b.password }, 'the adapter\'s credentials')
      const run = JSON.parse(b.received[2]?.body ?? '{}') as Record<string, any>
      t.match(run.params, { th: Number, path: '/ncs:devices/device{pe0}/connect', params: {}, format: 'normal' })
      t.same(JSON.parse(b.received[1]?.body ?? '{}').params, { mode: 'read' })
      // NSO's trace ids: in the audit event and on each call's span.
      const event = await auditOf('nso.runAction')
      t.equal(event?.target, 'b-lab')
      t.equal(event?.details?.nsoTraceIds, b.traceIds.join(' '))
      t.equal(b.traceIds.length, 4)
      const spans = exporter.getFinishedSpans().filter((s) => s.attributes['rpc.method'] !== undefined)
      t.same(spans.map((s) => s.attributes['rpc.method']), ['login', 'new_trans', 'run_action', 'logout'])
      t.same(spans.map((s) => s.attributes['nso.trace_id']), b.traceIds)
    })
  }

  t.test('runAction: a JSON-RPC error with HTTP 200 is a 502 carrying NSO\'s error object; the session is logged out', async (t) => {
    const { status, body } = await call('POST', '/nso_manager/runAction/a-lab', { path: '/ncs:devices/device{nowhere}/sync-from', params: {} })
    t.equal(status, 502)
    t.match(body, { code: 'UPSTREAM_ERROR', upstream: { status: 200, body: { error: { type: 'rpc.method.unknown_params_value', data: { param: 'path' } } } } })
    t.match(body.message, /a-lab.*JSON-RPC error to run_action/)
    t.same(a.jsonRpcCalls.map((c) => c.method), ['login', 'new_trans', 'run_action', 'logout'])
    t.equal(a.openJsonRpcSessions, 0)
  })

  t.test('runAction: a deadline passing mid-session is a 504, and the session is still logged out', async (t) => {
    a.jsonRpcHang.add('run_action')
    const { status, body } = await call('POST', '/orchestrator_manager/runAction/a-lab', { path: '/ncs:devices/device{ce0}/check-sync', params: {} })
    t.equal(status, 504)
    t.equal(body.code, 'UPSTREAM_TIMEOUT')
    t.same(a.jsonRpcCalls.map((c) => c.method), ['login', 'new_trans', 'run_action', 'logout'])
    t.equal(a.openJsonRpcSessions, 0)
  })

  t.test('runAction: bad input is a 400 naming the field, and nothing goes to NSO', async (t) => {
    for (const [payload, field] of [
      [{ path: 'ncs:devices', params: {} }, 'body/path'],
      [{ path: '/ncs:devices/check-sync' }, 'params'],
      [{ path: '/ncs:devices/check-sync', params: {}, variables: { a: 1 } }, 'body/variables'],
      [{ path: '/a\nb', params: {} }, 'body/path']
    ] as const) {
      const { status, body } = await call('POST', '/nso_manager/runAction/a-lab', payload)
      t.equal(status, 400, JSON.stringify(payload))
      t.match(body.message, field)
    }
    const unknown = await call('POST', '/nso_manager/runAction/nowhere', { path: '/ncs:devices/check-sync', params: {} })
    t.match(unknown, { status: 404, body: { code: 'ADAPTER_NOT_FOUND' } })
    t.equal(a.received.length + b.received.length, 0)
  })

  t.test('runAction: a wrong adapter password is a JSON-RPC login error, no session left', async (t) => {
    await createAdapter(app, nsoAdapter('c-wrong', a, { password: 'not-it' }))
    t.teardown(async () => { await app.inject({ method: 'DELETE', url: '/orchestrator_manager/adapters/c-wrong', headers: { authorization: adminAuth } }) })
    const { status, body } = await call('POST', '/nso_manager/runAction/c-wrong', { path: '/ncs:devices/check-sync', params: {} })
    t.equal(status, 502)
    t.match(body, { code: 'UPSTREAM_ERROR', upstream: { status: 200, body: { error: { type: 'rpc.method.failed' } } } })
    t.same(a.jsonRpcCalls.map((c) => c.method), ['login'], 'no logout without a session')
  })

  for (const prefix of PREFIXES) {
    t.test(`${prefix}: getDevicesFiltered asks every adapter; getDevicesFilteredForAdapter one`, async (t) => {
      const all = await call('GET', `${prefix}/devices/CE`)
      t.same(all, { status: 200, body: { result: ['CE0', 'ce0', 'ce1'] } })
      t.same(sent(a), ['GET /restconf/data/tailf-ncs:devices/device?fields=name'])
      t.same(sent(b), ['GET /restconf/data/tailf-ncs:devices/device?fields=name'])
      t.same(await call('GET', `${prefix}/devices/b-lab/r`), { status: 200, body: { result: ['core/rtr 1'] } })
      t.same(await call('GET', `${prefix}/devices/a-lab/zz`), { status: 200, body: { result: [] } })
    })

    t.test(`${prefix}: NEDs and auth groups, of one adapter and of all`, async (t) => {
      t.same(await call('GET', `${prefix}/neds/b-lab`), { status: 200, body: { result: [IOS, NX, XR].sort() } })
      t.same(sent(b), ['GET /restconf/data/tailf-ncs:devices/ned-ids/ned-id?fields=id'])
      t.same((await call('GET', `${prefix}/allNeds`)).body, { result: ['cisco-asa-cli-6.16:cisco-asa-cli-6.16', IOS, NX, XR].sort() })
      t.same(await call('GET', `${prefix}/authgroups/a-lab`), { status: 200, body: { result: ['default'] } })
      t.same((await call('GET', `${prefix}/allAuthgroups`)).body, { result: ['default', 'lab'] })
      t.ok(sent(a).includes('GET /restconf/data/tailf-ncs:devices/authgroups/group?fields=name'))
    })
  }

  t.test('an adapter down fails the operations over all adapters with a 502 naming it', async (t) => {
    b.mode = 'reset'
    for (const url of ['/nso_manager/devices/ce', '/nso_manager/allNeds', '/orchestrator_manager/allAuthgroups']) {
      const { status, body } = await call('GET', url)
      t.equal(status, 502, url)
      t.equal(body.code, 'UPSTREAM_UNREACHABLE')
      t.match(body.message, '"b-lab"')
    }
    b.mode = 'error'
    t.match(await call('GET', '/nso_manager/allNeds'), { status: 502, body: { code: 'UPSTREAM_ERROR', upstream: { status: 500 } } })
  })

  for (const flavour of ['nso-5.3', 'nso-6.1'] as const) {
    t.test(`isAlive finds the device's adapter in id order (${flavour}: its 404 is "not here")`, async (t) => {
      a.flavour = flavour
      b.flavour = flavour
      const { status, body } = await call('POST', '/nso_manager/isAlive', { device: 'pe0' })
      t.equal(status, 200)
      t.same(body, { device: 'pe0', connected: true, info: '(admin) Connected to pe0 - 127.0.0.1:22' })
      t.same(sent(a), ['GET /restconf/data/tailf-ncs:devices/device=pe0?fields=name'])
      t.same(sent(b), ['GET /restconf/data/tailf-ncs:devices/device=pe0?fields=name', 'POST /restconf/data/tailf-ncs:devices/device=pe0/connect'])
      t.same(await call('POST', '/orchestrator_manager/isAlive', { device: 'ghost' }),
        { status: 404, body: { statusCode: 404, error: 'Not Found', code: 'DEVICE_NOT_FOUND', message: 'No orchestrator adapter has a device "ghost"' } })
    })
  }

  t.test('isAlive: the first adapter in id order that has the device wins', async (t) => {
    // ce0 is on a-lab only (b-lab has CE0): a-lab answers; a device on both goes to a-lab.
    b.data = { 'tailf-ncs:devices': { device: [device('ce0', IOS)] } }
    const { body } = await call('POST', '/nso_manager/isAlive', { device: 'ce0' })
    t.equal(body.connected, true)
    t.ok(sent(a).includes('POST /restconf/data/tailf-ncs:devices/device=ce0/connect'))
    t.notOk(sent(b).some((line) => line.startsWith('POST')), 'nothing done on b-lab')
  })

  t.test('isAlive: an adapter failing while the device is looked for is a 502 naming it', async (t) => {
    a.mode = 'error'
    const { status, body } = await call('POST', '/nso_manager/isAlive', { device: 'pe0' })
    t.equal(status, 502)
    t.match(body, { code: 'UPSTREAM_ERROR', upstream: { status: 500 } })
    t.match(body.message, '"a-lab"')
    t.notOk(sent(b).some((line) => line.startsWith('POST')), 'nothing done on b-lab')
  })

  t.test('a device name is percent-encoded whole into paths, "/" included', async (t) => {
    const { status, body } = await call('POST', '/nso_manager/isAlive', { device: 'core/rtr 1' })
    t.equal(status, 200)
    t.equal(body.connected, true)
    t.ok(sent(b).includes('POST /restconf/data/tailf-ncs:devices/device=core%2Frtr%201/connect'))
  })

  t.test('a deadline passing while the device is looked for is a 504 naming the adapter', async (t) => {
    a.mode = 'hang'
    const { status, body } = await call('POST', '/nso_manager/isAlive', { device: 'pe0' })
    t.equal(status, 504)
    t.match(body, { code: 'UPSTREAM_TIMEOUT', message: /"a-lab"/ })
  })

  for (const prefix of PREFIXES) {
    t.test(`${prefix}: runCommand runs live-status exec any of each device's NED; one device's failure is its entry's`, async (t) => {
      b.data = dataB()
      const devices = b.data['tailf-ncs:devices'] as JsonObject
      ;((devices.device as JsonObject[])[1] as JsonObject).state = { 'admin-state': 'southbound-locked' }
      const { status, body } = await call('POST', `${prefix}/runCommand`, { devices: ['ce0', 'pe0', 'nx0', 'ghost', 'ce0'], command: 'show version' })
      t.equal(status, 200)
      t.match(body, [
        { device: 'ce0', command: 'show version', status: 'success', result: /show version\r\n\(stand-in output of ce0\)/ },
        { device: 'pe0', status: 'success', result: /stand-in output of pe0/ },
        { device: 'nx0', status: 'failure', result: 'nx0: device is southbound locked', code: 'UPSTREAM_ERROR' },
        { device: 'ghost', status: 'failure', code: 'DEVICE_NOT_FOUND' }
      ])
      t.equal(body.length, 4, 'a device named twice runs once')
      t.ok(sent(a).includes('POST /restconf/data/tailf-ncs:devices/device=ce0/live-status/tailf-ned-cisco-ios-stats:exec/any'))
      t.ok(sent(b).includes('POST /restconf/data/tailf-ncs:devices/device=pe0/live-status/tailf-ned-cisco-ios-xr-stats:exec/any'), 'XR before IOS')
      t.ok(sent(b).includes('POST /restconf/data/tailf-ncs:devices/device=nx0/live-status/tailf-ned-cisco-nx-stats:exec/any'))
      const exec = a.received.find((r) => r.url.endsWith(':exec/any'))
      t.same(JSON.parse(exec?.body ?? '{}'), { input: { args: 'show version' } })
    })
  }

  t.test('runCommands: one list per command, each entry with its command', async (t) => {
    const { status, body } = await call('POST', '/nso_manager/runCommands', { devices: 'ce1', commands: ['show clock', 'show ip int brief'] })
    t.equal(status, 200)
    t.match(body, [[{ device: 'ce1', command: 'show clock', status: 'success' }], [{ device: 'ce1', command: 'show ip int brief', status: 'success' }]])
    const bad = await call('POST', '/nso_manager/runCommands', { devices: [], commands: ['show clock'] })
    t.match(bad, { status: 400, body: { message: /devices/ } })
    t.match(await call('POST', '/nso_manager/runCommand', { devices: 'ce1', command: 'show\u0007' }), { status: 400, body: { message: /command/ } })
    const many = await call('POST', '/nso_manager/runCommands', {
      devices: Array.from({ length: 20 }, (_, i) => `d${i}`), commands: Array.from({ length: 26 }, (_, i) => `show ${i}`)
    })
    t.match(many, { status: 400, body: { code: 'INVALID_OPERATION_INPUT', message: /^body\/commands: 26 commands on 20 devices/ } })
  })

  for (const flavour of ['nso-5.3', 'nso-6.1'] as const) {
    t.test(`applyTemplates (${flavour}): every pair's outcome, NSO's text for a failed one`, async (t) => {
      a.flavour = flavour
      b.flavour = flavour
      const { status, body } = await call('POST', '/nso_manager/applyTemplates', {
        templates: [
          { device: 'pe0', template: 'ntp', variables: { SERVER: "it's \"here\"", COUNT: 2 } },
          { device: 'nx0', template: 'ntp' },
          { device: 'pe0', template: 'missing' },
          { device: 'ghost', template: 'ntp' }
        ]
      })
      t.equal(status, 200)
      t.equal(body.success, false)
      t.match(body.result[0], { device: 'pe0', template: 'ntp', adapterId: 'b-lab', success: true })
      if (flavour === 'nso-5.3') {
        t.equal(body.result[0].result, null, '5.3: no output')
        t.match(body.result[1], { device: 'nx0', success: true }, '5.3 does not say a template had nothing for a device')
      } else {
        t.same(body.result[0].result, { 'apply-template-result': [{ device: 'pe0', result: 'ok' }] })
        t.match(body.result[1], { device: 'nx0', success: false, code: 'TEMPLATE_NOT_APPLIED', result: 'no-namespace: No matching namespaces found for device: nx0.' })
      }
      t.match(body.result[2], { device: 'pe0', template: 'missing', success: false, code: 'UPSTREAM_ERROR', result: /illegal reference/ })
      t.match(body.result[3], { device: 'ghost', success: false, code: 'DEVICE_NOT_FOUND' })
      const applied = b.received.find((r) => r.url === '/restconf/data/tailf-ncs:devices/device=pe0/apply-template' && r.body.includes('"ntp"'))
      t.same(JSON.parse(applied?.body ?? '{}'), {
        input: { 'template-name': 'ntp', variable: [{ name: 'SERVER', value: 'concat(\'it\', "\'", \'s "here"\')' }, { name: 'COUNT', value: "'2'" }] }
      })
    })
  }

  t.test('applyTemplates on a named adapter asks no other; options is a 400 before anything is sent', async (t) => {
    const { body } = await call('POST', '/orchestrator_manager/applyTemplates', { adapterId: 'b-lab', templates: [{ device: 'pe0', template: 'banner' }] })
    t.match(body, { success: true, result: [{ device: 'pe0', success: true }] })
    t.equal(a.received.length, 0)
    b.reset()
    const options = await call('POST', '/nso_manager/applyTemplates', { templates: [{ device: 'pe0', template: 'banner' }], options: { dryRun: true } })
    t.match(options, { status: 400, body: { code: 'INVALID_OPERATION_INPUT', message: /body\/options/ } })
    t.equal(a.received.length + b.received.length, 0)
  })

  for (const prefix of PREFIXES) {
    t.test(`${prefix}: addLockItem posts commit-queue add-lock; block-others only when true`, async (t) => {
      const locked = await call('POST', `${prefix}/lockItem/a-lab`, { devices: ['ce0', 'ce1'], blockOthers: true })
      t.same(locked, { status: 200, body: { 'tailf-ncs:output': { 'commit-queue-id': 1700000000002 } } })
      t.same(JSON.parse(a.received[0]?.body ?? '{}'), { input: { device: ['ce0', 'ce1'], 'block-others': [null] } })
      t.equal(a.received[0]?.url, '/restconf/data/tailf-ncs:devices/commit-queue/add-lock')
      await call('POST', `${prefix}/lockItem/a-lab`, { devices: 'ce0', blockOthers: false })
      t.same(JSON.parse(a.received[1]?.body ?? '{}'), { input: { device: ['ce0'] } })
    })
  }

  t.test('addLockItem: an empty device list is a 400 (NSO would lock every device)', async (t) => {
    for (const devices of [[], '']) {
      const { status, body } = await call('POST', '/nso_manager/lockItem/a-lab', { devices, blockOthers: false })
      t.equal(status, 400)
      t.match(body.message, 'devices')
    }
    t.equal(a.received.length, 0)
  })

  t.test('an answer past the operations\' bound is a 502 UPSTREAM_RESPONSE_TOO_LARGE', async (t) => {
    // An adapter with a deadline far beyond the time 32 MiB take on a busy machine: the bound decides.
    await createAdapter(app, nsoAdapter('a-slow', a, { timeoutMs: 600000 }))
    t.teardown(async () => { await app.inject({ method: 'DELETE', url: '/orchestrator_manager/adapters/a-slow', headers: { authorization: adminAuth } }) })
    a.raw.set('/restconf/data/tailf-ncs:devices/device', { contentType: 'application/yang-data+json', body: Buffer.alloc(OPERATION_ANSWER_MAX_BYTES + 1, 0x20) })
    const { status, body } = await call('GET', '/nso_manager/devices/a-slow/ce')
    t.equal(status, 502)
    t.match(body, { code: 'UPSTREAM_RESPONSE_TOO_LARGE', message: /"a-slow"/ })
    // Without a Content-Length: cut once the bound is passed, not read to its end.
    a.raw.set('/restconf/data/tailf-ncs:devices/device', { contentType: 'application/yang-data+json', body: Buffer.alloc(OPERATION_ANSWER_MAX_BYTES * 2, 0x20), chunked: true })
    t.match(await call('GET', '/nso_manager/devices/a-slow/ce'), { status: 502, body: { code: 'UPSTREAM_RESPONSE_TOO_LARGE' } })
    const outcome = a.rawOutcomes.at(-1)
    t.ok(outcome !== undefined && outcome.written < OPERATION_ANSWER_MAX_BYTES * 2, 'the rest was never sent')
    a.raw.set('/restconf/data/tailf-ncs:devices/device', { contentType: 'application/yang-data+json', body: '{"tailf-ncs:device":[', chunked: true })
    t.match(await call('GET', '/nso_manager/devices/a-slow/ce'), { status: 502, body: { code: 'UPSTREAM_INVALID_JSON' } })
  })

  t.test('operations are admin only, and whoami lists them by the platform\'s names', async (t) => {
    const designer = await createUser(app, { username: 'nso-designer', roles: ['designer'] })
    t.equal((await call('GET', '/nso_manager/allNeds', undefined, designer)).status, 403)
    t.equal((await call('POST', '/orchestrator_manager/isAlive', { device: 'ce0' }, designer)).status, 403)
    t.equal(a.received.length + b.received.length, 0)
    const whoami = await call('GET', '/whoami')
    for (const name of ['runAction', 'getDevicesFiltered', 'getDevicesFilteredForAdapter', 'getNEDs', 'getAllNEDs', 'getAuthGroups',
      'getAllAuthGroups', 'isAlive', 'runCommand', 'runCommands', 'applyTemplates', 'addLockItem']) {
      t.ok(whoami.body.methods.NSOManager.includes(name), name)
    }
  })

  t.test('the OpenAPI document names each operation by the platform\'s method', async (t) => {
    const doc = (await call('GET', '/openapi.json')).body
    t.equal(doc.paths['/orchestrator_manager/runAction/{adapterId}'].post.operationId, 'runAction')
    t.equal(doc.paths['/orchestrator_manager/lockItem/{adapterId}'].post.operationId, 'addLockItem')
    t.equal(doc.paths['/orchestrator_manager/allNeds'].get.operationId, 'getAllNEDs')
    t.ok(doc.paths['/nso_manager/allNeds'].get.operationId !== 'getAllNEDs', 'the alias has an id of its own')
  })
})
