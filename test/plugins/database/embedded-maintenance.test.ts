// The embedded database's VACUUM and ANALYZE (plugins/database/embedded-maintenance.ts): passes after
// enough written rows give the planner statistics and reclaim dead rows; requests and shutdown
// go on beside them; nothing of it exists on a PostgreSQL server.
import t from 'tap'
import { componentGroupsRepository } from '../../../plugins/studio/component-groups-repository.js'
import { BASE_ROWS } from '../../../plugins/database/embedded-maintenance.js'
import { openDatabase } from '../../../plugins/database/index.js'
import { migrate } from '../../../plugins/database/migrations.js'
import type { Db } from '../../../plugins/database/types.js'
import { adminAuth, buildTestApp, createTestDatabase, testConfig, testDatabases, type TestApp } from '../../helper.js'
import { until } from '../../helpers/until.js'

const BASE = '/studio/component-groups'

/** Groups 'Group 1'..'Group n', written as the service writes rows (counted). */
async function insertGroups (db: Db, from: number, to: number): Promise<void> {
  await db.query(`INSERT INTO component_groups (id, name, gbac_read, doc)
    SELECT lpad(to_hex(g), 24, '0'), 'Group ' || g, ARRAY['team-' || (g % 50)], '{"description":"","members":[],"meta":{}}'
    FROM generate_series($1::int, $2::int) AS g`, [from, to])
}

/** Every row updated once, its read list changed: a new row version and new entries in every index. */
async function updateAll (db: Db, round: number): Promise<void> {
  await db.query("UPDATE component_groups SET version = version + 1, gbac_read = ARRAY['team-' || ((version + $1::int) % 50)], updated_at = now()", [round])
}

const maintenanceOf = (app: TestApp) => {
  const maintenance = app.db.maintenance
  if (maintenance === undefined) throw new Error('the embedded database has no maintenance')
  return maintenance
}

t.test('a start runs a pass when rows were never analyzed, and none when all were', async (t) => {
  // Data written without passes (by an earlier version of the service, say): migrated, filled.
  // From the migrated copy: migrate() finds nothing left to apply.
  const database = await createTestDatabase(t, 'embedded', { migrated: true })
  const earlier = await openDatabase(testConfig(database.env))
  await migrate(earlier)
  await insertGroups(earlier, 1, 300) // fewer rows than make a pass due
  await earlier.close()
  t.equal(earlier.maintenance?.state().passes, 0, 'no pass ran there')

  const never = async (app: TestApp) => (await app.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_class WHERE relkind = 'r' AND relnamespace = current_schema()::regnamespace AND reltuples < 0 AND pg_relation_size(oid) > 0")).rows[0]?.n
  const first = await buildTestApp(t, { database })
  await maintenanceOf(first).settled()
  t.equal(maintenanceOf(first).state().passes, 1, 'one pass after the migrations')
  t.equal(await never(first), 0, 'every table with rows has been analyzed')
  const { rows } = await first.db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stats WHERE tablename = 'component_groups'")
  t.ok((rows[0]?.n ?? 0) > 0, 'the groups have statistics')
  await first.close()
  const second = await buildTestApp(t, { database })
  await maintenanceOf(second).settled()
  t.equal(maintenanceOf(second).state().passes, 0, 'a start on analyzed data runs none')
})

t.test('after enough written rows a pass gives the planner statistics', async (t) => {
  const app = await buildTestApp(t)
  const maintenance = maintenanceOf(app)
  await maintenance.settled()
  const passes = maintenance.state().passes
  const statistics = async () => (await app.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'component_groups'")).rows[0]?.n
  // A repository of its own each time: the service's keeps what it read for a minute.
  const frequent = async () => await componentGroupsRepository(app.db).frequentNameTrigrams()

  const before = maintenance.state().changedRows
  await insertGroups(app.db, 1, 300)
  t.equal(maintenance.state().changedRows - before, 300, 'the inserted rows are counted')
  t.equal(await statistics(), 0, 'no statistics on the rows yet')
  t.equal((await frequent()).size, 0, 'nor on their names\' trigrams')
  for (let round = 1; maintenance.state().passes === passes; round++) {
    if (round > 10) throw new Error(`no pass after ${round - 1} rounds: ${JSON.stringify(maintenance.state())}`)
    await updateAll(app.db, round)
    await maintenance.settled()
  }
  t.ok(maintenance.state().threshold >= BASE_ROWS, `the next pass is due after ${maintenance.state().threshold} rows`)
  t.ok((await statistics() ?? 0) > 0, 'pg_stats has the table\'s columns')
  const trigrams = await frequent()
  t.ok(['gro', 'oup', 'up '].every((trigram) => trigrams.has(trigram)), `the trigrams every "Group N" has are known (${[...trigrams].join('|')})`)
  const metrics = await app.inject({ url: '/metrics' })
  t.match(metrics.body, new RegExp(`db_maintenance_passes_total\\{outcome="done"\\} ${maintenance.state().passes}\\b`), 'the passes are in the metrics')
  t.same((await app.db.query('SHOW default_statistics_target')).rows, [{ default_statistics_target: '30' }], 'ANALYZE samples 9,000 rows a table')
  const contains = await app.inject({ url: `${BASE}?contains=${encodeURIComponent('oup 123')}&limit=5`, headers: { authorization: adminAuth } })
  t.same(contains.json().items.map((d: { name: string }) => d.name), ['Group 123'], 'contains answers the same with them')
})

t.test('passes reclaim dead rows: the table and its indexes stop growing under repeated updates', async (t) => {
  const app = await buildTestApp(t)
  const maintenance = maintenanceOf(app)
  await maintenance.settled()
  await insertGroups(app.db, 1, 500)
  const size = async () => Number((await app.db.query<{ bytes: string }>("SELECT pg_total_relation_size('component_groups') AS bytes")).rows[0]?.bytes)
  const sizes: number[] = []
  for (let round = 1; round <= 24; round++) {
    await updateAll(app.db, round)
    await maintenance.settled()
    sizes.push(await size())
  }
  t.ok(maintenance.state().passes >= 4, `passes ran (${maintenance.state().passes})`)
  // Without VACUUM every round adds a version of each row and an entry in each index: the table
  // grows with the rounds (2.3 times from round 8 to 24 measured, 1.2 to 2.8 MB). With it, the space is reused.
  const [early, late] = [sizes[7] ?? 0, sizes[23] ?? 0]
  t.ok(late <= early * 1.3, `size after 24 rounds ${late} bytes, after 8 ${early}`)
})

t.test('requests are answered during and after a pass', async (t) => {
  const app = await buildTestApp(t)
  const maintenance = maintenanceOf(app)
  await maintenance.settled()
  await insertGroups(app.db, 1, 20_000)
  const created = await app.inject({ method: 'POST', url: BASE, headers: { authorization: adminAuth }, payload: { componentGroup: { name: 'Probe', gbacRead: [], members: [] } } })
  t.equal(created.statusCode, 200, 'a group created')
  const id = created.json().created._id as string
  t.ok(maintenance.state().running, 'the insert made a pass due')
  const statuses: number[] = []
  let during = 0
  while (maintenance.state().running) {
    const [get, list] = await Promise.all([
      app.inject({ url: `${BASE}/${id}`, headers: { authorization: adminAuth } }),
      app.inject({ url: `${BASE}?contains=oup%201&limit=3`, headers: { authorization: adminAuth } })
    ])
    statuses.push(get.statusCode, list.statusCode)
    if (maintenance.state().running) during++
  }
  t.ok(during > 0, `requests were answered while the pass ran (${during} pairs)`)
  t.ok(statuses.every((s) => s === 200), 'every one with 200')
  t.equal(maintenance.state().failures, 0, 'the pass did not fail')
  const replaced = await app.inject({ method: 'PUT', url: `${BASE}/${id}`, headers: { authorization: adminAuth }, payload: { update: { name: 'Probe 2', gbacRead: [], members: [] } } })
  t.equal(replaced.statusCode, 200, 'and after it')
})

t.test('closing during a pass stops it without waiting for the rest of it', async (t) => {
  const database = await createTestDatabase(t, 'embedded')
  const db = await openDatabase(testConfig(database.env))
  let closedDb = false
  t.teardown(async () => { if (!closedDb) await db.close() })
  const maintenance = db.maintenance
  if (maintenance === undefined) throw new Error('the embedded database has no maintenance')
  await db.exec(`CREATE TABLE wide (n integer, v text);
    ${Array.from({ length: 8 }, (_, i) => `CREATE TABLE other_${i} (n integer, v text);`).join('\n')}`)
  await db.query("INSERT INTO wide SELECT g, repeat('x', 200) FROM generate_series(1, 30000) AS g")
  t.ok(maintenance.state().running, 'a pass started')
  // The test sends nothing more: the connection in use is a statement of the pass.
  await until(() => db.poolStats().idle === 0, 'a statement of the pass runs')
  await db.close()
  closedDb = true
  await maintenance.settled()
  t.equal(maintenance.state().passes, 0, 'closed without waiting for the rest of the pass: it did not complete')
  t.equal(maintenance.state().failures, 0, 'nor counted as failed')
  const again = await openDatabase(testConfig(database.env))
  t.teardown(async () => { await again.close() })
  t.same((await again.query<{ n: number }>('SELECT count(*)::int AS n FROM wide')).rows, [{ n: 30000 }], 'the data is intact')
})

t.test('a pass quotes table names and never runs inside a transaction', async (t) => {
  const database = await createTestDatabase(t, 'embedded')
  const db = await openDatabase(testConfig(database.env))
  t.teardown(async () => { await db.close() })
  const maintenance = db.maintenance
  if (maintenance === undefined) throw new Error('the embedded database has no maintenance')
  await db.exec('CREATE TABLE "Odd ""name"", table" (n integer); CREATE TABLE "select" (n integer)')
  // The rows are written inside a transaction that stays open a while after the pass is due:
  // VACUUM cannot run in a transaction block, so the pass must wait for its end.
  await db.transaction(async (tx) => {
    await tx.query('INSERT INTO "Odd ""name"", table" SELECT g FROM generate_series(1, 15000) AS g')
    await tx.query('INSERT INTO "select" SELECT g FROM generate_series(1, 100) AS g')
    t.ok(maintenance.state().running, 'the pass is due')
    // It waits for an idle connection at most MAX_IDLE_WAIT_MS, then sends its first statement,
    // which waits in turn behind this transaction.
    await until(() => db.poolStats().waiting > 0, 'a statement of the pass waits for the connection')
  })
  await maintenance.settled()
  t.same(maintenance.state(), { ...maintenance.state(), passes: 1, failures: 0, running: false }, 'it completed')
  const { rows } = await db.query<{ relname: string, reltuples: number }>(
    "SELECT relname, reltuples::int AS reltuples FROM pg_class WHERE relname IN ('Odd \"name\", table', 'select') ORDER BY relname")
  t.same(rows, [{ relname: 'Odd "name", table', reltuples: 15000 }, { relname: 'select', reltuples: 100 }], 'both tables were analyzed')
})

if (testDatabases.includes('postgres')) {
  t.test('nothing is counted or scheduled on a PostgreSQL server, whose autovacuum does it', async (t) => {
    const app = await buildTestApp(t, { database: 'postgres' })
    t.equal(app.db.kind, 'postgres', 'on the server')
    t.equal(app.db.maintenance, undefined, 'no maintenance')
    await insertGroups(app.db, 1, 2 * BASE_ROWS)
    t.equal(app.db.maintenance, undefined, 'none after many written rows')
    const metrics = await app.inject({ url: '/metrics' })
    t.notMatch(metrics.body, /db_maintenance/, 'and no maintenance metrics')
  })
}
