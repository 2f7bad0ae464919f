// On the PostgreSQL server with enough events for the planner to care: a page of GET /audit reads
// its rows through an index in id order, filtered or not, and its count is bounded; the
// retention's delete finds old events through the time index.
import t from 'tap'
import pg from 'pg'
import { buildTestApp, createTestDatabase, testDatabases } from '../../helper.js'
import { AUDIT_LIST } from '../../../schemas/audit.js'
import { eventsSource } from '../../../plugins/audit/events-repository.js'
import type { TimeRange } from '../../../lib/audit/events.js'
import { parseListQuery, type ListQueryString } from '../../../lib/lists/grammar.js'
import { listStatements } from '../../../lib/lists/statements.js'
import { explain, indexes, nodes, pageAndCarried, types } from '../../helpers/plans.js'

const ROWS = 50_000

if (testDatabases.includes('postgres')) {
  t.test('the audit list uses its indexes at scale', async (t) => {
    const database = await createTestDatabase(t, 'postgres')
    const app = await buildTestApp(t, { database })
    const client = new pg.Client({ connectionString: database.env.DATABASE_URL })
    await client.connect()
    t.teardown(async () => { await client.end() })
    await client.query(`INSERT INTO audit_events (at, actor, address, request_id, action, target, outcome, status, duration_ms)
      SELECT now() - make_interval(secs => ${ROWS} - g), 'user-' || (g % 500), '192.0.2.1', 'req-' || g,
        (ARRAY['user.create', 'studio.replace', 'orchestrator.restAction', 'request.denied', 'git.project.update'])[g % 5 + 1],
        'target-' || (g % 2000), 'success', 200, 1
      FROM generate_series(1, ${ROWS}) AS g`)
    await client.query('VACUUM ANALYZE audit_events')

    const parse = (q: Partial<ListQueryString>) => {
      const parsed = parseListQuery(AUDIT_LIST, { limit: 25, skip: 0, sort: 'time', order: -1, ...q }, app.config)
      if (!parsed.ok) throw new Error(parsed.reason)
      return parsed.value
    }
    const hourAgo = new Date(Date.now() - 3_600_000)
    // The index a page may use; `sorted`: it may sort what a selective filter found (a few
    // hundred rows at most here) rather than read in order.
    const cases: Array<[string, Partial<ListQueryString>, TimeRange, RegExp, boolean]> = [
      ['newest first', {}, {}, /^audit_events_pkey$/, false],
      ['oldest first, a deep page', { order: 1, skip: 10_000 }, {}, /^audit_events_pkey$/, false],
      ['one actor', { equals: 'user-7', equalsField: 'actor' }, {}, /^audit_events_actor$/, true],
      // A fifth of the events: reading the newest in id order finds a page soonest.
      ['one frequent action', { equals: 'user.create' }, {}, /^audit_events_(action|pkey)$/, false],
      ['one target', { equals: 'target-42', equalsField: 'target' }, {}, /^audit_events_target$/, true],
      ['the last hour', {}, { from: hourAgo }, /^audit_events_(pkey|at)$/, true],
      ['one actor in the last hour', { equals: 'user-7', equalsField: 'actor' }, { from: hourAgo }, /^audit_events_(actor|at)$/, true]
    ]
    for (const [name, q, range, index, sorted] of cases) {
      const { page, carriesTotal, count } = listStatements(parse(q), eventsSource(range))
      const { page: pagePlan, carried } = pageAndCarried(await explain(client, page.text, page.params))
      const countPlan = nodes(await explain(client, count.text, count.params))
      t.notOk(types(pagePlan).includes('Seq Scan'), `${name}: the page reads no table from end to end (${types(pagePlan).join(', ')})`)
      if (!sorted) t.notOk(types(pagePlan).includes('Sort'), `${name}: the rows come in index order`)
      t.ok(indexes(pagePlan).some((i) => index.test(i)), `${name}: the page uses ${String(index)} (${indexes(pagePlan).join(', ')})`)
      t.ok(types(countPlan).includes('Limit'), `${name}: the count is bounded`)
      if (carriesTotal) t.ok(types(carried).includes('Limit'), `${name}: the carried count is bounded`)
    }

    await client.query('UPDATE audit_events SET at = at - interval \'100 days\' WHERE id % 10 = 0')
    await client.query('ANALYZE audit_events')
    const prune = nodes(await explain(client, `DELETE FROM audit_events WHERE id IN (
      SELECT id FROM audit_events WHERE at < now() - make_interval(days => $1) ORDER BY at LIMIT $2 FOR UPDATE SKIP LOCKED)`, [90, 1000]))
    t.ok(indexes(prune).includes('audit_events_at'), `the retention finds old events through audit_events_at (${indexes(prune).join(', ')})`)
    t.same((await app.audit.prune()).deleted, ROWS / 10, 'and deletes them all')
  })
}
