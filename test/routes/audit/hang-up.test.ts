// A relay call whose caller hangs up while its answer streams is recorded all the same (Fastify
// runs no onResponse hook for it), and its place in the audit queue is given back.
import t from 'tap'
import { Agent, request } from 'undici'
import { adminAuth, buildTestApp } from '../../helper.js'
import { largeDocument } from '../../fixtures/nso-server.js'
import { createAdapter, nsoAdapter, startNso } from '../../helpers/nso.js'
import { until } from '../../helpers/until.js'

t.setTimeout(300_000)
const YANG_JSON = 'application/yang-data+json'

t.test('a caller that hangs up mid-answer: the call is in the trail', async (t) => {
  const app = await buildTestApp(t, { database: 'any' })
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const nso = await startNso(t)
  await createAdapter(app, nsoAdapter('nso', nso))
  let release: (value?: unknown) => void = () => {}
  t.teardown(() => { release() })
  nso.raw.set('/large', { contentType: YANG_JSON, body: largeDocument(1024 * 1024), holdAfterFirstChunk: new Promise((resolve) => { release = resolve }) })
  const client = new Agent()
  t.teardown(async () => { await client.destroy() })
  const gone = new AbortController()
  const answer = await request(`${base}/orchestrator_manager/restQuery/nso`, {
    dispatcher: client,
    method: 'POST',
    headers: { authorization: adminAuth, 'content-type': 'application/json' },
    body: JSON.stringify({ params: { path: '/large?token=secret', accept: YANG_JSON } }),
    signal: gone.signal
  })
  t.equal(answer.statusCode, 200, 'the answer has begun')
  gone.abort()
  await answer.body.text().catch(() => {})
  let rows: Array<{ status: number, details: Record<string, unknown> }> = []
  await until(async () => {
    await app.audit.flush()
    rows = (await app.db.query<{ status: number, details: Record<string, unknown> }>("SELECT status, details FROM audit_events WHERE action = 'orchestrator.restQuery'")).rows
    return rows.length > 0
  }, 'the call its caller hung up on is in the audit trail', 60_000)
  t.match(rows, [{ status: 200, details: { path: '/large', query: 'token', nsoStatus: 200 } }], 'recorded, with the status it was answered with')
  t.equal(app.audit.state().reserved, 0, 'its place used, none held')
})
