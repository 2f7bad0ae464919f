// The relay against answers as NSO 5.3 and 6.1 give them (test/fixtures/nso-server.ts flavours),
// and the limits around them: the line of calls waiting for a connection, answers cut after
// their status, bodies of a type not asked for. Over real sockets, on both databases.
import t from 'tap'
import { Agent, request } from 'undici'
import { adminAuth, buildTestApp, captureLogs, testDatabases } from '../../helper.js'
import { seedDatastore } from '../../fixtures/nso-server.js'
import { createAdapter, nsoAdapter, startNso } from '../../helpers/nso.js'
import { until } from '../../helpers/until.js'

const YANG_JSON = 'application/yang-data+json'
const YANG_XML = 'application/yang-data+xml'
const DEVICES = '/restconf/data/tailf-ncs:devices'

for (const database of testDatabases) {
  t.test(`relay and NSO's answers (${database})`, async (t) => {
    const app = await buildTestApp(t, {
      database,
      env: { ORCHESTRATOR_ADAPTER_CACHE_TTL_MS: '60000', ORCHESTRATOR_POOL_CONNECTIONS: '10', ORCHESTRATOR_QUEUE_MAX: '100', ORCHESTRATOR_QUEUE_WAIT_MS: '30000' }
    })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const nso = await startNso(t)
    await createAdapter(app, nsoAdapter('nso', nso, { timeoutMs: 5000 }))
    t.beforeEach(() => { nso.reset() })

    const call = async (kind: 'restQuery' | 'restAction', params: Record<string, unknown>, body: unknown = {}) => {
      const response = await request(`${base}/orchestrator_manager/${kind}/nso`, {
        method: 'POST',
        headers: { authorization: adminAuth, 'content-type': 'application/json' },
        body: JSON.stringify(kind === 'restQuery' ? { params } : { params, body })
      })
      return { status: response.statusCode, headers: response.headers, text: await response.body.text() }
    }

    t.test('25 parallel calls on a pool of 10, each answered in 60% of the deadline: all succeed', async (t) => {
      // Three waves of 3 s on a 5 s deadline: the third waits 6 s for a socket, past the deadline,
      // which counts from the socket. (2 s of margin a call, for a busy machine.)
      nso.delayMs = 3000
      const answers = await Promise.all(Array.from({ length: 25 }, async () =>
        await call('restQuery', { path: `${DEVICES}/device=ce0/address`, accept: YANG_JSON })))
      t.same(answers.map((a) => a.status), Array(25).fill(200))
      t.ok(answers.every((a) => a.text === '{"tailf-ncs:address":"127.0.0.1"}'), 'each carries the document')
      t.equal(nso.received.length, 25, 'each went out once')
    })

    t.test('an answer cut after NSO\'s status says so, with nsoStatus, never "could not reach"', async (t) => {
      const created = `${DEVICES}/device`
      nso.raw.set(created, { status: 201, contentType: YANG_JSON, body: '{"tailf-ncs:device":[{"name":"ce2"}]}', failAfterBytes: 10 })
      const cut = await call('restAction', { path: created, accept: YANG_JSON }, { 'tailf-ncs:device': [{ name: 'ce2' }] })
      t.equal(cut.status, 502)
      const body = JSON.parse(cut.text) as Record<string, unknown>
      t.match(body, { code: 'UPSTREAM_ANSWER_INTERRUPTED', nsoStatus: 201 })
      t.match(body.message, /answered 201 Created, then the connection broke .* may have been carried out/)
      t.notMatch(body.message, /Could not reach/)

      // An error answer cut in its body: its status is known too.
      nso.raw.set(created, { status: 409, contentType: YANG_JSON, body: '{"ietf-restconf:errors":{}}', failAfterBytes: 5 })
      const cutError = await call('restAction', { path: created, accept: YANG_JSON }, {})
      t.match(JSON.parse(cutError.text), { statusCode: 502, code: 'UPSTREAM_ANSWER_INTERRUPTED', nsoStatus: 409 })

      // Before any status, it is still unreachable.
      nso.mode = 'reset'
      t.match(JSON.parse((await call('restAction', { path: created, accept: YANG_JSON }, {})).text), { code: 'UPSTREAM_UNREACHABLE' })
    })

    t.test('NSO 6.1: an empty container (204, JSON type, no body) reads as {} with X-Orchestrator-Empty', async (t) => {
      nso.flavour = 'nso-6.1'
      nso.data = { ...seedDatastore(), 'tailf-ncs:services': {} }
      const path = '/restconf/data/tailf-ncs:services'
      const json = await call('restQuery', { path, accept: YANG_JSON })
      t.equal(json.status, 200)
      t.same(JSON.parse(json.text), {}, 'a JSON client reads an empty object')
      t.equal(json.headers['content-type'], YANG_JSON, 'NSO\'s type, as it came')
      t.equal(json.headers['x-orchestrator-empty'], 'true')
      t.equal(json.headers['x-orchestrator-status'], '204')
      t.equal(json.headers['x-cisco-nso-trace-id'], nso.traceIds[0], 'NSO\'s trace id')

      // Asked as XML (NSO still labels its 204 JSON): no JSON stand-in is made up for an XML client... unless NSO's type is JSON.
      nso.raw.set(path, { status: 204, contentType: 'text/html', body: '' })
      const xml = await call('restQuery', { path, accept: YANG_XML })
      t.equal(xml.status, 204)
      t.equal(xml.text, '')
      t.equal(xml.headers['x-orchestrator-empty'], 'true')

      nso.raw.delete(path)
      const action = await call('restAction', { path, accept: YANG_JSON, method: 'GET' })
      t.same(JSON.parse(action.text), [{ result: '204' }])
      t.equal(action.headers['x-orchestrator-status'], '204')
    })

    t.test('NSO 5.3: a create answers a bodiless text/html 201, a success with NSO\'s Location; a merge a bodiless 204', async (t) => {
      nso.flavour = 'nso-5.3'
      const created = await call('restAction', { path: DEVICES, accept: YANG_JSON },
        { 'tailf-ncs:device': [{ name: 'ce2', address: '10.1.1.2', port: 10024, authgroup: 'default' }] })
      t.equal(created.status, 200, created.text)
      t.same(JSON.parse(created.text), [{ result: '201' }])
      t.equal(created.headers['x-orchestrator-location'], `http://127.0.0.1:${nso.port}${DEVICES}/device=ce2`, 'verbatim')
      t.equal(created.headers.location, undefined, 'not as Location: it would point into this service')
      t.equal(created.headers['x-cisco-nso-trace-id'], undefined, 'NSO 5.3 sends no trace id')
      const merged = await call('restAction', { path: `${DEVICES}/device=ce2`, accept: YANG_JSON, method: 'PATCH' }, { 'tailf-ncs:device': [{ description: 'edge' }] })
      t.same(JSON.parse(merged.text), [{ result: '204' }])
      t.equal(nso.getData('tailf-ncs:devices/device=ce2/description'), 'edge')
    })

    t.test('a 2xx with a body of a type not asked for (a proxy\'s page) is a 502 naming the type', async (t) => {
      const path = `${DEVICES}/device=ce0`
      for (const chunked of [false, true]) {
        nso.raw.set(path, { contentType: 'text/html; charset=utf-8', body: '<html><body>Sign in to the proxy</body></html>', chunked })
        for (const kind of ['restQuery', 'restAction'] as const) {
          const answer = await call(kind, { path, accept: YANG_JSON, ...(kind === 'restAction' ? { method: 'GET' } : {}) })
          t.equal(answer.status, 502, `${kind}, chunked ${chunked}`)
          const body = JSON.parse(answer.text) as Record<string, unknown>
          t.equal(body.code, 'UPSTREAM_UNEXPECTED_MEDIA_TYPE')
          t.match(body.message, /answered 200 OK with a body of type "text\/html; charset=utf-8" where "application\/yang-data\+json" was asked for/)
        }
      }
      // Bodiless and chunked (no Content-Length to tell in advance): a success.
      nso.raw.set(path, { contentType: 'text/html', body: '', chunked: true })
      t.same(JSON.parse((await call('restAction', { path, accept: YANG_JSON, method: 'GET' })).text), [{ result: '200' }])
      // The same family is what was asked: NSO answers yang-data+json to application/json.
      nso.raw.set(path, { contentType: YANG_JSON, body: '{"a":1}' })
      t.same(JSON.parse((await call('restQuery', { path, accept: 'application/json' })).text), { a: 1 })
      // No type at all, with a body, is not what was asked either.
      nso.raw.set(path, { body: '{"a":1}' })
      t.match(JSON.parse((await call('restQuery', { path, accept: YANG_JSON })).text), { code: 'UPSTREAM_UNEXPECTED_MEDIA_TYPE', message: /type none/ })
      t.equal(nso.received.length, 7)
    })

    t.test('NSO 6.1: its trace id reaches the caller of a success and of an error', async (t) => {
      nso.flavour = 'nso-6.1'
      const ok = await call('restQuery', { path: `${DEVICES}/device=ce0/address`, accept: YANG_JSON })
      t.equal(ok.headers['x-cisco-nso-trace-id'], nso.traceIds[0])
      t.equal(ok.headers['x-orchestrator-status'], '200')
      t.match(nso.traceIds[0], /^[0-9a-f]{32}$/)
      const missing = await call('restQuery', { path: `${DEVICES}/device=nope`, accept: YANG_JSON })
      t.match(JSON.parse(missing.text), { code: 'UPSTREAM_ERROR', upstream: { status: 404, traceId: nso.traceIds[1] } })
    })
  })
}

t.test('the line of waiting calls, configured by env: full is a 503 with Retry-After at once', async (t) => {
  const app = await buildTestApp(t, {
    database: 'any',
    env: { ORCHESTRATOR_ADAPTER_CACHE_TTL_MS: '60000', ORCHESTRATOR_POOL_CONNECTIONS: '1', ORCHESTRATOR_QUEUE_MAX: '0', ORCHESTRATOR_QUEUE_WAIT_MS: '2500' }
  })
  const nso = await startNso(t)
  await createAdapter(app, nsoAdapter('nso', nso, { timeoutMs: 5000 }))
  let release: (value?: unknown) => void = () => {}
  nso.raw.set('/held', { contentType: YANG_JSON, body: '{}', holdBeforeBody: new Promise((resolve) => { release = resolve }) })
  const inject = (path: string) => app.inject({
    method: 'POST',
    url: '/orchestrator_manager/restQuery/nso',
    headers: { authorization: adminAuth },
    payload: { params: { path, accept: YANG_JSON } }
  })
  const running = inject('/held')
  await until(() => nso.received.length > 0, 'the first call reaches the orchestrator')
  const refused = await inject(`${DEVICES}/device=ce0/address`)
  t.equal(refused.statusCode, 503)
  t.equal(refused.headers['retry-after'], '3', 'the wait limit, in whole seconds')
  t.match(refused.json(), { code: 'RELAY_QUEUE_FULL', retryAfter: 3, message: /ORCHESTRATOR_QUEUE_MAX/ })
  release()
  t.equal((await running).statusCode, 200)
  t.equal(nso.received.length, 1, 'the refused call never went out')
})

t.test('a call whose caller leaves while it waits for a connection leaves the line and is never sent', async (t) => {
  const logs = captureLogs()
  const app = await buildTestApp(t, {
    env: { LOG_LEVEL: 'info', ORCHESTRATOR_ADAPTER_CACHE_TTL_MS: '60000', ORCHESTRATOR_POOL_CONNECTIONS: '1', ORCHESTRATOR_QUEUE_MAX: '5', ORCHESTRATOR_QUEUE_WAIT_MS: '60000' },
    logStream: logs
  })
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const nso = await startNso(t)
  await createAdapter(app, nsoAdapter('nso', nso, { timeoutMs: 5000 }))
  let release: (value?: unknown) => void = () => {}
  nso.raw.set('/held', { contentType: YANG_JSON, body: '{}', holdBeforeBody: new Promise((resolve) => { release = resolve }) })
  const client = new Agent()
  const relay = (kind: string, body: unknown, signal?: AbortSignal) => request(`${base}/orchestrator_manager/${kind}/nso`, {
    dispatcher: client,
    method: 'POST',
    headers: { authorization: adminAuth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal })
  })
  const queued = () => app.orchestrator.poolStats()[0]?.queued ?? 0
  const running = relay('restQuery', { params: { path: '/held', accept: YANG_JSON } })
  await until(() => nso.received.length === 1, 'the first call holds the connection')
  // An action (a write) whose caller gives up while it waits its turn.
  const gone = new AbortController()
  const action = relay('restAction', { params: { path: `${DEVICES}/device=ce0/address`, accept: YANG_JSON, method: 'PUT' }, body: { 'tailf-ncs:address': '10.0.0.9' } }, gone.signal)
    .catch((err: unknown) => err)
  await until(() => queued() === 1, 'the action waits in the line')
  gone.abort()
  t.match(await action, { name: 'AbortError' })
  await until(() => queued() === 0, 'the line is empty again')
  release()
  const answer = await running
  t.equal(answer.statusCode, 200)
  await answer.body.text()
  t.same(nso.received.map((r) => r.url), ['/held'], 'the abandoned action never reached the orchestrator')
  await app.audit.flush()
  const { rows } = await app.db.query<{ status: number, outcome: string }>("SELECT status, outcome FROM audit_events WHERE action = 'orchestrator.restAction'")
  t.same(rows, [{ status: 499, outcome: 'failure' }], 'the trail says the call was dropped')

  // An action already sent when its caller leaves is carried out: the trail records it all the same.
  nso.delayMs = 300
  const late = new AbortController()
  const sent = relay('restAction', { params: { path: `${DEVICES}/device=ce0/address`, accept: YANG_JSON, method: 'PUT' }, body: { 'tailf-ncs:address': '10.0.0.9' } }, late.signal)
    .catch((err: unknown) => err)
  await until(() => nso.received.length === 2, 'the action reached the orchestrator')
  late.abort()
  t.match(await sent, { name: 'AbortError' })
  let recorded: Array<{ status: number, details: Record<string, unknown> }> = []
  await until(async () => {
    await app.audit.flush()
    recorded = (await app.db.query<{ status: number, details: Record<string, unknown> }>("SELECT status, details FROM audit_events WHERE action = 'orchestrator.restAction' ORDER BY id")).rows
    return recorded.length === 2
  }, 'the carried-out action is in the trail')
  t.match(recorded[1], { status: 200, details: { method: 'PUT', path: `${DEVICES}/device=ce0/address`, nsoStatus: Number } }, 'with the orchestrator\'s status')
  await until(() => logs.lines.some((l) => l.includes('hung up before its answer was complete')), 'the hang-up is logged')
  t.same(logs.lines.map((l) => JSON.parse(l) as { level: number, msg: string }).filter((l) => l.level >= 50).map((l) => l.msg), [], 'a hang-up is no error of the service')
  // The client's sockets go now: the app's close would wait for one opened and never used.
  await client.destroy()
})
