// The write path when the database cannot take the events: they stay queued and counted, are
// written once it can, and what close() cannot write is logged as lost. On both databases.
import t from 'tap'
import { adminAuth, buildTestApp, captureLogs, createTestDatabase, testDatabases, type TestApp } from '../../helper.js'
import { until } from '../../helpers/until.js'

t.setTimeout(300_000)

async function metric (app: TestApp, name: string): Promise<number> {
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body
  return Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? NaN)
}

const deny = async (app: TestApp, n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await app.inject({ method: 'GET', url: '/users', headers: { authorization: 'Bearer nothing' } })
}

for (const database of testDatabases) {
  t.test(`a write that fails on ${database}: queued, counted, retried`, async (t) => {
    const logs = captureLogs()
    const app = await buildTestApp(t, { database, env: { LOG_LEVEL: 'warn' }, logStream: logs })
    await app.db.query('ALTER TABLE audit_events RENAME TO audit_events_away')
    await deny(app, 5)
    await app.audit.flush()
    t.match(app.audit.state(), { queued: 5, written: 0, dropped: 0 })
    t.ok(app.audit.state().writeFailures >= 1)
    t.ok(await metric(app, 'audit_write_failures_total') >= 1, 'the failures are a metric')
    t.equal(await metric(app, 'audit_events_queued'), 5)
    t.ok(logs.lines.some((l) => l.includes('audit events could not be written')), 'and logged')
    await app.db.query('ALTER TABLE audit_events_away RENAME TO audit_events')
    // The retry's timer writes them (at most 5 s after the last failure).
    await until(() => app.audit.state().queued === 0, 'the queued events written')
    const page = await app.inject({ method: 'GET', url: '/audit?equals=request.denied', headers: { authorization: adminAuth } })
    t.equal(page.json<{ total: number }>().total, 5, 'none lost')
    t.equal(await metric(app, 'audit_events_total{fate="written"}'), 5)
    t.equal(await metric(app, 'audit_events_total{fate="dropped"}'), 0)
  })
}

t.test('what close cannot write is logged as lost', async (t) => {
  const logs = captureLogs()
  const database = await createTestDatabase(t, 'any', { migrated: true })
  const app = await buildTestApp(t, { database, env: { LOG_LEVEL: 'warn', AUDIT_FLUSH_INTERVAL_MS: '60000' }, logStream: logs })
  await app.db.query('ALTER TABLE audit_events RENAME TO audit_events_away')
  await deny(app, 3)
  await app.close()
  t.ok(logs.lines.some((l) => l.includes('audit events lost at close') && l.includes('"lost":3')), 'three lost, said so')
})
