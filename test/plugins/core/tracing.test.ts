// Traces: off by default (nothing registered); on, one chain from the caller's traceparent through
// the request, its database statements and the relay's call to the traceparent NSO received, and
// to the traceparent the Git provider received. No span attribute holds a credential.
import t, { type Test } from 'tap'
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node'
import { createServer } from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../../../app.js'
import { ADMIN, adminAuth, buildTestApp, captureLogs, createTestDatabase, createUser, testConfig, testDatabases } from '../../helper.js'
import { startGitServer } from '../../fixtures/git-server.js'
import { createAdapter, nsoAdapter, startNso } from '../../helpers/nso.js'
import { until } from '../../helpers/until.js'

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const CALLER_SPAN_ID = '00f067aa0ba902b7'
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`
const GIT_TOKEN = 'glpat-Provider-Token-77aa11'
const NSO_PASSWORD = 'nso-Adapter-Secret-42'

function traced (): { exporter: InMemorySpanExporter, tracing: { spanProcessor: SimpleSpanProcessor } } {
  const exporter = new InMemorySpanExporter()
  return { exporter, tracing: { spanProcessor: new SimpleSpanProcessor(exporter) } }
}

const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId
const idOf = (span: ReadableSpan): string => span.spanContext().spanId

/** The spans from `span` up to the root, by parent id. */
function ancestry (spans: ReadableSpan[], span: ReadableSpan): ReadableSpan[] {
  const byId = new Map(spans.map((s) => [idOf(s), s]))
  const chain = [span]
  for (let at = byId.get(parentOf(span) ?? ''); at !== undefined; at = byId.get(parentOf(at) ?? '')) chain.push(at)
  return chain
}

/**
 * The spans once every parent named in the caller's trace has ended: the handler's span ends a
 * moment after the answer went out (its promise settles after the reply). Other traces are not
 * waited for: a batched audit write can be the child of a span that ended before the exporter was
 * reset, and would be waited for in vain.
 */
async function allEnded (exporter: InMemorySpanExporter): Promise<ReadableSpan[]> {
  await until(() => {
    const spans = exporter.getFinishedSpans()
    const ids = new Set(spans.map(idOf))
    return !spans.some((s) => s.spanContext().traceId === TRACE_ID && parentOf(s) !== undefined && parentOf(s) !== CALLER_SPAN_ID && !ids.has(parentOf(s) as string))
  }, "every parent span in the caller's trace has ended", 10_000)
  return exporter.getFinishedSpans()
}

/** Every attribute, event and status text of every span holds none of `secrets`. */
function holdsNoSecret (t: Test, spans: ReadableSpan[], secrets: string[]): void {
  const text = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })))
  for (const secret of secrets) t.notOk(text.includes(secret), `no span holds ${secret.slice(0, 6)}…`)
}

t.test('off by default: nothing registered, nothing sent upstream', async (t) => {
  const app = await buildTestApp(t, { database: 'any' })
  t.equal(app.tracer, null)
  t.notOk(app.hasPlugin('@fastify/otel'), 'no request instrumentation')
  const nso = await startNso(t)
  await createAdapter(app, nsoAdapter('nso', nso))
  const response = await app.inject({
    method: 'POST',
    url: '/orchestrator_manager/restQuery/nso',
    headers: { authorization: adminAuth, traceparent: TRACEPARENT },
    payload: { params: { path: '/restconf/data/tailf-ncs:devices', accept: 'application/yang-data+json' } }
  })
  t.equal(response.statusCode, 200)
  t.equal(nso.received[0]?.headers.traceparent, undefined, 'no traceparent goes to NSO')
})

for (const database of testDatabases) {
  t.test(`on, on ${database}: from the caller's traceparent to NSO's`, async (t) => {
    const { exporter, tracing } = traced()
    const app = await buildTestApp(t, { database, tracing })
    t.ok(app.tracer !== null)
    const nso = await startNso(t, { password: NSO_PASSWORD })
    await createAdapter(app, nsoAdapter('nso', nso))
    const operator = await createUser(app, { username: 'operator', roles: ['admin'] })
    // What was flushed before the call (the user and the adapter being made) is not its batch.
    await app.audit.flush()
    const writtenBefore = app.audit.state().written
    exporter.reset()
    nso.reset()

    const response = await app.inject({
      method: 'POST',
      url: '/orchestrator_manager/restQuery/nso',
      headers: { authorization: operator, traceparent: TRACEPARENT },
      payload: { params: { path: '/restconf/data/tailf-ncs:devices/device=ce0?depth=2', accept: 'application/yang-data+json' } }
    })
    t.equal(response.statusCode, 200)
    const spans = await allEnded(exporter)

    const request = spans.find((s) => s.attributes['http.route'] === '/orchestrator_manager/restQuery/:adapterId')
    if (request === undefined) throw new Error(`no request span among ${spans.map((s) => s.name).join(', ')}`)
    t.equal(request.spanContext().traceId, TRACE_ID, "the caller's trace")
    t.equal(parentOf(request), CALLER_SPAN_ID, "the caller's span is the request span's parent")
    t.equal(request.attributes['http.response.status_code'], 200)
    t.equal(request.attributes['http.request.method'], 'POST')
    t.equal(request.attributes['enduser.id'], 'operator', 'the user, by name')

    const relay = spans.find((s) => s.name === 'orchestrator GET')
    if (relay === undefined) throw new Error('no relay span')
    t.equal(relay.attributes['orchestrator.adapter'], 'nso')
    t.equal(relay.attributes['url.path'], '/restconf/data/tailf-ncs:devices/device=ce0')
    t.equal(relay.attributes['http.response.status_code'], 200)
    t.ok(ancestry(spans, relay).includes(request), 'the relay span is under the request span')
    const sent = nso.received[0]?.headers.traceparent
    t.equal(sent, `00-${TRACE_ID}-${idOf(relay)}-01`, 'NSO received the relay span as its parent')

    const wait = spans.find((s) => s.name === 'orchestrator connection wait')
    t.equal(wait === undefined ? undefined : parentOf(wait), idOf(relay), 'the wait for a pooled connection is a child of the call')

    // The audit trail's batched writes run apart from any request, in traces of their own.
    // The flush the request's event scheduled, not one started here.
    await until(() => app.audit.state().written !== writtenBefore, "the request's audit batch is written", 10_000)
    const auditWrites = exporter.getFinishedSpans().filter((s) => String(s.attributes['db.query.text']).startsWith('INSERT INTO audit_events'))
    t.ok(auditWrites.length > 0, 'the audit batch is traced')
    t.notOk(auditWrites.some((s) => s.spanContext().traceId === TRACE_ID), 'in a trace of its own, not the caller\'s')
    const statements = spans.filter((s) => s.attributes['db.system.name'] === 'postgresql' && s.spanContext().traceId === TRACE_ID)
    t.ok(statements.length > 0, 'database statements are traced')
    for (const s of statements) {
      t.equal(s.attributes['db.instance'], database)
      t.ok(ancestry(spans, s).includes(request), `${s.name} is under the request span`)
    }
    holdsNoSecret(t, spans, [NSO_PASSWORD, operator.slice('Basic '.length), 'Basic ', ADMIN.password])
  })
}

t.test('a failing call: error statuses on the request, relay and statement spans', async (t) => {
  const { exporter, tracing } = traced()
  const app = await buildTestApp(t, { database: 'any', tracing })
  const nso = await startNso(t)
  await createAdapter(app, nsoAdapter('nso', nso, { timeoutMs: 300 }))
  exporter.reset()
  const query = async () => await app.inject({
    method: 'POST',
    url: '/orchestrator_manager/restQuery/nso',
    headers: { authorization: adminAuth },
    payload: { params: { path: '/restconf/data/tailf-ncs:devices', accept: 'application/yang-data+json' } }
  })

  nso.mode = 'hang'
  const timedOut = await query()
  t.equal(timedOut.statusCode, 504)
  const relay = exporter.getFinishedSpans().find((s) => s.name === 'orchestrator GET')
  t.equal(relay?.status.code, 2, 'the relay span failed')
  t.equal(relay?.attributes['error.type'], 'TimeoutError')

  nso.mode = 'error'
  exporter.reset()
  const failed = await query()
  t.equal(failed.statusCode, 502)
  const answered = exporter.getFinishedSpans().find((s) => s.name === 'orchestrator GET')
  t.equal(answered?.status.code, 2, 'an error status fails the relay span')
  t.ok(Number(answered?.attributes['http.response.status_code']) >= 500)

  // A statement the database refuses: its span says so, with PostgreSQL's code.
  exporter.reset()
  await t.rejects(app.db.query('SELECT * FROM no_such_table'))
  const refused = exporter.getFinishedSpans().find((s) => s.name === 'SELECT')
  t.equal(refused?.status.code, 2)
  t.equal(refused?.attributes['db.response.status_code'], '42P01')

  // A token in the query string is a credential: never in a span.
  exporter.reset()
  await app.inject({ method: 'GET', url: '/whoami?token=query-Token-Secret-99' })
  const whoami = exporter.getFinishedSpans().find((s) => s.attributes['http.route'] === '/whoami')
  t.equal(whoami?.attributes['url.path'], '/whoami')
  holdsNoSecret(t, exporter.getFinishedSpans(), ['query-Token-Secret-99'])
})

t.test('on: the Git provider receives the trace, under the request span', async (t) => {
  const server = await startGitServer({ username: 'bot', password: GIT_TOKEN })
  t.teardown(async () => { await server.close() })
  await server.createRepo('netops/traced', { files: { 'a.json': '{"a":1}\n' } })
  const { exporter, tracing } = traced()
  const env = { GIT_PROVIDERS: JSON.stringify({ GitHub: { url: server.url, username: 'bot', token: GIT_TOKEN } }) }
  const app = await buildTestApp(t, { database: 'any', env, tracing })
  exporter.reset()

  const response = await app.inject({
    method: 'GET',
    url: `/git/GitHub/repos/${encodeURIComponent('netops/traced')}/branches/main/projects/a.json`,
    headers: { authorization: adminAuth, traceparent: TRACEPARENT }
  })
  t.equal(response.statusCode, 200, response.body)
  const spans = await allEnded(exporter)
  const request = spans.find((s) => parentOf(s) === CALLER_SPAN_ID)
  if (request === undefined) throw new Error('no request span')
  const calls = spans.filter((s) => s.name.startsWith('git '))
  t.ok(calls.length > 0, 'provider exchanges are traced')
  t.equal(server.requestLog.length, calls.length, 'one span per exchange')
  for (const call of calls) {
    t.equal(call.attributes['git.provider'], 'GitHub')
    t.ok(ancestry(spans, call).includes(request), `${call.name} is under the request span`)
    t.ok(server.requestLog.some((r) => r.traceparent === `00-${TRACE_ID}-${idOf(call)}-01`), `the provider received ${call.name}'s traceparent`)
  }
  t.ok(calls.some((c) => c.attributes['http.response.status_code'] === 200))
  holdsNoSecret(t, spans, [GIT_TOKEN, Buffer.from(`bot:${GIT_TOKEN}`).toString('base64')])
})

t.test('on with an OTLP endpoint: spans reach the collector, with its headers, by the time the app closed', async (t) => {
  const received: Array<{ url: string | undefined, apiKey: string | string[] | undefined, bytes: number }> = []
  const collector = createServer((req, res) => {
    let bytes = 0
    req.on('data', (chunk: Buffer) => { bytes += chunk.length })
    req.on('end', () => {
      received.push({ url: req.url, apiKey: req.headers['api-key'], bytes })
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  collector.listen(0, '127.0.0.1')
  await once(collector, 'listening')
  t.teardown(() => { collector.close() })
  const { port } = collector.address() as AddressInfo
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_EXPORTER_OTLP_HEADERS: 'api-key=collector-key' }
  const database = await createTestDatabase(t, 'any', { migrated: true })
  const app = await buildApp(testConfig({ ...database.env, ...env }))
  await app.ready()
  t.ok(app.tracer !== null)
  const response = await app.inject({ method: 'GET', url: '/whoami', headers: { authorization: adminAuth } })
  t.equal(response.statusCode, 200)
  await app.close()
  t.ok(received.length > 0, 'the batch was sent on close')
  t.same(received.map((r) => [r.url, r.apiKey]), received.map(() => ['/v1/traces', 'collector-key']))
  t.ok(received.every((r) => r.bytes > 0))
})

t.test('a collector that is away neither holds nor fails the stop', async (t) => {
  const database = await createTestDatabase(t, 'any', { migrated: true })
  const logs = captureLogs()
  // Port 9 (discard) refuses connections here: the exporter retries for longer than the stop waits.
  const app = await buildApp(testConfig({ ...database.env, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', LOG_LEVEL: 'warn' }), { logStream: logs })
  await app.ready()
  t.equal((await app.inject({ method: 'GET', url: '/whoami', headers: { authorization: adminAuth } })).statusCode, 200)
  await t.resolves(app.close(), 'the app closes')
  const warned = logs.lines.map((line) => JSON.parse(line) as { msg: string }).filter((l) => /last traces/.test(l.msg))
  t.equal(warned.length, 1, 'one warning says the last spans were lost')
})
