import t from 'tap'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { openDatabase } from '../../../plugins/database/index.js'
import { MIGRATIONS_DIR, migrate } from '../../../plugins/database/migrations.js'
import type { Db } from '../../../plugins/database/types.js'
import { captureLogs, adminAuth, basic, buildTestApp, createTestDatabase, testConfig, testDatabases } from '../../helper.js'
import { until } from '../../helpers/until.js'

async function open (t: Parameters<typeof createTestDatabase>[0], env: Record<string, string>): Promise<Db> {
  const db = await openDatabase(testConfig(env))
  t.teardown(async () => { await db.close() })
  return db
}

for (const kind of testDatabases) {
  t.test(`database interface on ${kind}`, async (t) => {
    const database = await createTestDatabase(t, kind)
    const db = await open(t, database.env)

    t.test('migrations apply once, even when started twice at the same time', async (t) => {
      const [a, b] = await Promise.all([migrate(db), migrate(db)])
      t.same([...a, ...b].sort(), (await db.query<{ id: string }>('SELECT id FROM schema_migrations ORDER BY id')).rows.map((r) => r.id))
      t.same(await migrate(db), [], 'nothing left to apply')
    })

    t.test('a transaction commits or rolls back as a whole', async (t) => {
      await db.query('CREATE TABLE tx_probe (n integer PRIMARY KEY)')
      await db.transaction(async (tx) => { await tx.query('INSERT INTO tx_probe VALUES (1), (2)') })
      await t.rejects(db.transaction(async (tx) => {
        await tx.query('INSERT INTO tx_probe VALUES (3)')
        await tx.query('INSERT INTO tx_probe VALUES (1)')
      }), { code: '23505' })
      const { rows, rowCount } = await db.query<{ n: number }>('SELECT n FROM tx_probe ORDER BY n')
      t.same(rows.map((r) => r.n), [1, 2])
      t.equal(rowCount, 2)
      const update = await db.query('UPDATE tx_probe SET n = n + 10')
      t.equal(update.rowCount, 2)
    })

    t.test('the advisory lock serialises holders of one key', async (t) => {
      const events: string[] = []
      // Whichever holder gets the lock first keeps it until the other is waiting for it: on a
      // server, the key's advisory lock not granted; the embedded database's locks are
      // this process's, and the second holder asked for it when withAdvisoryLock was called.
      const otherWaits = async (): Promise<boolean> => kind === 'embedded' || (await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objsubid = 1
           AND ((classid::bigint << 32) | objid::bigint) = hashtextextended('probe', 0)`)).rows[0].n > 0
      const hold = (name: string) => async () => {
        events.push(`${name} in`)
        if (events.length === 1) await until(otherWaits, 'the other holder waits for the lock')
        events.push(`${name} out`)
      }
      await Promise.all([db.withAdvisoryLock('probe', hold('a')), db.withAdvisoryLock('probe', hold('b'))])
      t.same(events.slice(0, 2).map((e) => e.split(' ')[1]), ['in', 'out'], 'no overlap')
      t.same(events.slice(2).map((e) => e.split(' ')[1]), ['in', 'out'])
      await t.rejects(db.withAdvisoryLock('probe', async () => { throw new Error('inside') }), /inside/)
      t.equal(await db.withAdvisoryLock('probe', async () => 'free again'), 'free again', 'released after a failure')
      t.match(db.poolStats(), { total: Number, idle: Number, waiting: Number })
    })
  })
}

// The next two cases share one embedded database: the second closes it.
let shared: Promise<Db> | undefined
const sharedEmbedded = async (): Promise<Db> => await (shared ??= (async () => await open(t, (await createTestDatabase(t, 'embedded')).env))())

t.test('an embedded query runs beside the event loop, not on it', async (t) => {
  const db = await sharedEmbedded()
  let ticks = 0
  const timer = setInterval(() => { ticks++ }, 10)
  try {
    await db.query('SELECT pg_sleep(0.3)')
  } finally {
    clearInterval(timer)
  }
  // On the event loop, the 300 ms in PostgreSQL would have let no timer run at all.
  t.ok(ticks >= 5, `timers ran while the query did (${ticks} ticks of 10 ms)`)
})

t.test('a closed embedded database refuses queries as unavailable, never hangs', async (t) => {
  const db = await sharedEmbedded()
  await db.close()
  await t.rejects(db.query('SELECT 1'), { message: /PGlite is closed/ })
  await db.close()
  t.pass('closing twice is harmless')
})

t.test('a new embedded database is created, migrated and analyzed by a process of its own', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'netauto-new-'))
  t.teardown(async () => { await rm(dataDir, { recursive: true, force: true }) })
  const db = await open(t, { DATA_DIR: dataDir })
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort()
  t.same((await db.query<{ id: string }>('SELECT id FROM schema_migrations ORDER BY id')).rows.map((r) => r.id), files, 'every migration was applied before the database opened')
  t.same(await migrate(db), [], 'the service finds nothing left to apply')
  const { rows } = await db.query<{ reltuples: number }>("SELECT reltuples FROM pg_class WHERE relname = 'schema_migrations'")
  t.equal(Number(rows[0]?.reltuples), files.length, 'its rows were analyzed: no maintenance pass is due at the first start')
  t.equal(await db.maintenance?.startIfNeverAnalyzed(), false, 'no table holds rows never analyzed')
})

t.test('the embedded database keeps its data across restarts', async (t) => {
  const database = await createTestDatabase(t, 'embedded')
  const first = await openDatabase(testConfig(database.env))
  await first.query('CREATE TABLE kept (v text)')
  await first.query("INSERT INTO kept VALUES ('still here')")
  await first.close()
  const second = await open(t, database.env)
  t.same((await second.query('SELECT v FROM kept')).rows, [{ v: 'still here' }])
})

t.test('bootstrap admin: a generated password is printed once and works', async (t) => {
  const database = await createTestDatabase(t, testDatabases.includes('postgres') ? 'postgres' : 'embedded')
  const printed: string[] = []
  const write = process.stdout.write.bind(process.stdout)
  process.stdout.write = ((chunk: string) => { printed.push(String(chunk)); return true }) as typeof process.stdout.write
  let app
  try {
    app = await buildTestApp(t, { database, env: { ADMIN_PASSWORD: undefined, ADMIN_USERNAME: 'root' } })
  } finally {
    process.stdout.write = write
  }
  const line = printed.find((l) => l.includes('Generated password'))
  const password = /"root": (\S+)/.exec(line ?? '')?.[1]
  t.ok(password !== undefined && password.length >= 24, 'a strong password was printed')
  const response = await app.inject({ url: '/users/root', headers: { authorization: basic('root', password ?? '') } })
  t.equal(response.statusCode, 200)
  t.same(response.json().roles, ['admin'])

  const again: string[] = []
  process.stdout.write = ((chunk: string) => { again.push(String(chunk)); return true }) as typeof process.stdout.write
  try {
    await buildTestApp(t, { database, env: { ADMIN_PASSWORD: undefined, ADMIN_USERNAME: 'root' } })
  } finally {
    process.stdout.write = write
  }
  t.notOk(again.some((l) => l.includes('Generated password')), 'not printed on the next start')
})

t.test('logs carry request ids and never credentials or passwords', async (t) => {
  const logs = captureLogs()
  // What is logged, and redacted, does not depend on the database. (X-Request-Id counts from a trusted proxy.)
  const app = await buildTestApp(t, { database: 'any', env: { LOG_LEVEL: 'info', TRUST_PROXY: 'loopback' }, logStream: logs })
  await app.inject({
    method: 'POST',
    url: '/users',
    headers: { authorization: adminAuth, 'x-request-id': 'req-123' },
    payload: { username: 'ann', password: 'ann-secret-password' }
  })
  await app.inject({ url: '/users', headers: { authorization: basic('ann', 'wrong-secret-password') } })
  const text = logs.lines.join('')
  t.match(text, /"reqId":"req-123"/)
  t.notMatch(text, /ann-secret-password|wrong-secret-password|admin-password-for-tests/)
  t.notMatch(text, new RegExp(adminAuth.slice(6)))
  app.log.info({ req: { headers: { authorization: 'Basic c2VjcmV0' } }, password: 'p1', user: { password: 'p2' }, provider: { token: 't1' }, adapter: { password: 'p3' }, body: { password: 'p4' }, err: Object.assign(new Error('failed'), { token: 't2' }) }, 'probe')
  const probe = logs.lines.at(-1) ?? ''
  t.match(probe, /"probe"/)
  t.notMatch(probe, /c2VjcmV0|p1|p2|p3|p4|t1|t2/, 'secrets in logged objects are redacted')
  t.match(probe, /\[Redacted\]/)
})

t.test('two instances started at once on one server database both migrate and serve', { skip: testDatabases.includes('postgres') ? false : 'needs TEST_DATABASE_URL' }, async (t) => {
  const database = await createTestDatabase(t, 'postgres')
  const [a, b] = await Promise.all([buildTestApp(t, { database }), buildTestApp(t, { database })])
  for (const app of [a, b]) {
    t.equal((await app.inject({ url: '/ready' })).statusCode, 200)
    t.equal((await app.inject({ url: '/users', headers: { authorization: adminAuth } })).statusCode, 200)
  }
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql'))
  const { rows } = await a.db.query<{ id: string }>('SELECT id FROM schema_migrations ORDER BY id')
  t.same(rows.map((r) => r.id), files.sort(), 'every migration recorded exactly once')
  const users = await a.db.query<{ n: number }>('SELECT count(*)::int AS n FROM users')
  t.equal(users.rows[0]?.n, 1, 'one bootstrap admin, not two')
})
