// Relayed paths are recorded without their query string (whose values may be credentials): the
// names of its parameters at most. On both databases.
import t from 'tap'
import { adminAuth, buildTestApp, testDatabases } from '../../helper.js'
import { createAdapter, nsoAdapter, startNso } from '../../helpers/nso.js'

t.setTimeout(300_000)
const YANG_JSON = 'application/yang-data+json'
const SECRET = 'relay-query-Secret-Value-7'

for (const database of testDatabases) {
  t.test(`relayed paths in the audit trail on ${database}`, async (t) => {
    const nso = await startNso(t)
    const app = await buildTestApp(t, { database })
    await createAdapter(app, nsoAdapter('nso', nso))
    const path = `/restconf/data/tailf-ncs:devices/device=ce0?token=${SECRET}&depth=2`
    const relay = async (kind: 'restQuery' | 'restAction', params: Record<string, unknown>): Promise<void> => {
      const answer = await app.inject({
        method: 'POST',
        url: `/orchestrator_manager/${kind}/nso`,
        headers: { authorization: adminAuth },
        payload: kind === 'restQuery' ? { params } : { params, body: {} }
      })
      t.not(answer.statusCode, 400, `${kind} relayed (${answer.statusCode})`)
    }
    await relay('restQuery', { path, accept: YANG_JSON })
    await relay('restAction', { path, accept: YANG_JSON, method: 'GET' })
    await relay('restQuery', { path: '/restconf/data/tailf-ncs:devices/device=ce0', accept: YANG_JSON })
    t.ok(nso.received.some((r) => r.url.includes(SECRET)), 'the query string went to the orchestrator')
    await app.audit.flush()
    const { rows } = await app.db.query<{ action: string, details: Record<string, unknown>, row: string }>(
      "SELECT action, details, row_to_json(e)::text AS row FROM audit_events e WHERE action LIKE 'orchestrator.%' ORDER BY id")
    t.equal(rows.length, 3)
    t.match(rows[0]?.details, { method: 'GET', path: '/restconf/data/tailf-ncs:devices/device=ce0', query: 'token,depth' })
    t.match(rows[1]?.details, { method: 'GET', path: '/restconf/data/tailf-ncs:devices/device=ce0', query: 'token,depth' })
    t.notOk('query' in (rows[2]?.details ?? {}), 'no query: no names')
    for (const row of rows) t.notOk(row.row.includes(SECRET), `${row.action}: the value is not stored`)
  })
}
