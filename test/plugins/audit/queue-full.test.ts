// No event of a write is ever dropped: while the audit queue is full (the database cannot take
// the events), requests that would change something, relay calls included, are refused with 503
// before they act; denied requests' events are the ones dropped. On both databases.
import t from 'tap'
import { adminAuth, buildTestApp, testDatabases, type TestApp } from '../../helper.js'
import { createAdapter, nsoAdapter, startNso } from '../../helpers/nso.js'
import { until } from '../../helpers/until.js'

t.setTimeout(300_000)
const YANG_JSON = 'application/yang-data+json'

async function metric (app: TestApp, name: string): Promise<number> {
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body
  return Number(new RegExp(`^${name.replace(/[{}]/g, '\\$&')} (\\d+)`, 'm').exec(text)?.[1] ?? NaN)
}

for (const database of testDatabases) {
  t.test(`a full audit queue on ${database}: writes refused before they act, none of their events lost`, async (t) => {
    const nso = await startNso(t)
    // 8 places: events without a reservation (denied requests) only below 4.
    const app = await buildTestApp(t, { database, env: { AUDIT_QUEUE_MAX: '8', ORCHESTRATOR_ADAPTER_CACHE_TTL_MS: '60000' } })
    await createAdapter(app, nsoAdapter('nso', nso))
    await app.audit.flush()
    const before = (await app.db.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_events')).rows[0]?.n ?? 0
    await app.db.query('ALTER TABLE audit_events RENAME TO audit_events_away')
    nso.received.length = 0

    // Writes and relay calls, all at once: each holds its event's place from before it acts.
    const creates = Array.from({ length: 10 }, async (_, i) => await app.inject({
      method: 'POST',
      url: '/studio/component-groups',
      headers: { authorization: adminAuth },
      payload: { componentGroup: { name: `full-${i}`, members: [], gbacRead: [] } }
    }))
    const queries = Array.from({ length: 6 }, async () => await app.inject({
      method: 'POST',
      url: '/orchestrator_manager/restQuery/nso',
      headers: { authorization: adminAuth },
      payload: { params: { path: '/restconf/data/tailf-ncs:devices/device=ce0', accept: YANG_JSON } }
    }))
    const answers = await Promise.all([...creates, ...queries])
    const created = answers.slice(0, 10).filter((r) => r.statusCode === 200).length
    const queried = answers.slice(10).filter((r) => r.statusCode === 200).length
    const refused = answers.filter((r) => r.statusCode === 503)
    t.equal(created + queried + refused.length, 16, `every answer a 200 or a 503 (${answers.map((r) => r.statusCode).join(' ')})`)
    t.equal(created + queried, 8, 'as many acted as the queue has places')
    for (const r of refused) {
      t.match(r.json(), { statusCode: 503, code: 'AUDIT_TRAIL_FULL' })
      t.equal(r.headers['retry-after'], '5')
    }
    // Nothing done by a refused request.
    const groups = (await app.db.query<{ n: number }>("SELECT count(*)::int AS n FROM component_groups WHERE name LIKE 'full-%'")).rows[0]?.n
    t.equal(groups, created, 'a group for each create that was answered 200, none for a 503')
    t.equal(nso.received.length, queried, 'the orchestrator reached by each query answered 200, by none refused')

    // Denied requests go on being answered; their events are the ones dropped.
    for (let i = 0; i < 3; i++) t.equal((await app.inject({ url: '/users' })).statusCode, 401)
    t.equal(app.audit.state().dropped, 3, 'the denied requests\' events dropped, and counted')
    t.equal((await app.inject({ url: '/health' })).statusCode, 200, 'reads go on')

    // The database back: every write's event is written.
    await app.db.query('ALTER TABLE audit_events_away RENAME TO audit_events')
    // (A batch being written counts as queued until it is.)
    await until(() => app.audit.state().queued === 0, 'the queued events written', 60_000)
    const { rows } = await app.db.query<{ action: string, status: number }>('SELECT action, status FROM audit_events ORDER BY id OFFSET $1', [before])
    t.equal(rows.filter((r) => r.action === 'studio.create' && r.status === 200).length, created, 'every create recorded')
    t.equal(rows.filter((r) => r.action === 'orchestrator.restQuery' && r.status === 200).length, queried, 'every relay call recorded')
    t.equal(rows.length, 8, 'and nothing of the refused requests')
    t.equal(await metric(app, 'audit_events_total{fate="dropped"}'), 3, 'none but the denied requests\' dropped')
    t.equal(app.audit.state().reserved, 0, 'every place reserved used or given back')
    const again = await app.inject({
      method: 'POST',
      url: '/studio/component-groups',
      headers: { authorization: adminAuth },
      payload: { componentGroup: { name: 'after', members: [], gbacRead: [] } }
    })
    t.equal(again.statusCode, 200, 'writes accepted again')
  })

  t.test(`places given back on ${database}: writes that fail validation or are refused`, async (t) => {
    const app = await buildTestApp(t, { database, env: { AUDIT_QUEUE_MAX: '4' } })
    for (let i = 0; i < 10; i++) {
      t.equal((await app.inject({ method: 'POST', url: '/studio/component-groups', headers: { authorization: adminAuth }, payload: {} })).statusCode, 400)
      t.equal((await app.inject({ method: 'POST', url: '/studio/component-groups', payload: {} })).statusCode, 401)
    }
    t.equal(app.audit.state().reserved, 0)
    await app.audit.flush()
    t.equal((await app.inject({
      method: 'POST',
      url: '/studio/component-groups',
      headers: { authorization: adminAuth },
      payload: { componentGroup: { name: 'fits', members: [], gbacRead: [] } }
    })).statusCode, 200, 'the queue still has its places')
  })
}
