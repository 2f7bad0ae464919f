// The embedded database's worker: a statement past its deadline answers 503 and the next call
// runs on a replaced worker; a row that cannot be delivered answers an error; neither hangs.
import t from 'tap'
import { openDatabase } from '../../../plugins/database/index.js'
import type { Db } from '../../../plugins/database/types.js'
import { isDatabaseUnavailable, toErrorBody } from '../../../lib/http/errors.js'
import { createTestDatabase, testConfig } from '../../helper.js'
import { writesNested } from '../../hardening/hostile.js'

// Long enough that an ordinary statement on a busy machine never reaches it.
const DEADLINE_MS = '3000'
const SLEEP = 'SELECT pg_sleep(60)'
// Deeper than JSON text can be written from JavaScript (its stack), though PostgreSQL stores it.
const UNWRITABLE = "SELECT (repeat('{\"a\":', 20000) || '1' || repeat('}', 20000))::json AS j"

async function within<T> (promise: Promise<T>, ms = 60_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([promise, new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { reject(new Error(`no answer within ${ms} ms`)) }, ms)
    })])
  } finally {
    clearTimeout(timer)
  }
}

async function open (t: Parameters<typeof createTestDatabase>[0]): Promise<Db> {
  const database = await createTestDatabase(t, 'embedded')
  const db = await openDatabase(testConfig({ ...database.env, DATABASE_QUERY_TIMEOUT_MS: DEADLINE_MS }))
  t.teardown(async () => { await db.close() })
  return db
}

t.test('a statement past its deadline answers 503 and the next one runs on a new worker', async (t) => {
  const db = await open(t)
  await db.exec('CREATE TABLE kept (n integer); INSERT INTO kept VALUES (1), (2)')
  const stuck = await within(db.query(SLEEP).then(() => undefined, (err: unknown) => err))
  t.ok(isDatabaseUnavailable(stuck), 'the stuck statement is a database-unavailable error')
  t.equal(toErrorBody(stuck).statusCode, 503)
  const waiting = await within(Promise.all([db.query('SELECT 1 AS one'), db.query('SELECT n FROM kept ORDER BY n')]))
  t.same(waiting[0].rows, [{ one: 1 }], 'the next call is answered')
  t.same(waiting[1].rows.map((r) => r.n), [1, 2], 'committed data survived the replacement')

  // Once more: a replacement is itself replaceable (each round waits out the deadline).
  t.ok(isDatabaseUnavailable(await within(db.query(SLEEP).then(() => undefined, (err: unknown) => err))))
  t.same((await within(db.query('SELECT count(*)::int AS n FROM kept'))).rows, [{ n: 2 }])
})

t.test('a transaction whose statement passes its deadline never continues on the new worker', async (t) => {
  const db = await open(t)
  await db.exec('CREATE TABLE tx_kept (n integer)')
  let afterReplacement: unknown
  const failed = await within(db.transaction(async (tx) => {
    await tx.query('INSERT INTO tx_kept VALUES (1)')
    try {
      await tx.query(SLEEP)
    } finally {
      afterReplacement = await tx.query('INSERT INTO tx_kept VALUES (2)').then(() => 'ran', (err: unknown) => err)
    }
  }).then(() => undefined, (err: unknown) => err))
  t.ok(isDatabaseUnavailable(failed), 'the transaction fails as unavailable')
  t.ok(isDatabaseUnavailable(afterReplacement), 'a statement of that transaction after the deadline is refused, not run alone')
  t.same((await within(db.query('SELECT count(*)::int AS n FROM tx_kept'))).rows, [{ n: 0 }], 'nothing of the transaction was kept')
})

// The last two cases leave the worker as they found it: they share one database.
let shared: Promise<Db> | undefined
const sharedDb = async (): Promise<Db> => await (shared ??= open(t))

t.test('dates and bytes come back as they would from the server', async (t) => {
  const db = await sharedDb()
  const { rows } = await db.query<{ at: Date, ats: Date[], bytes: Buffer, doc: unknown }>(
    "SELECT timestamptz '2024-05-06T07:08:09.123Z' AS at, ARRAY[timestamptz '2020-01-01Z'] AS ats, '\\x00ff'::bytea AS bytes, '{\"at\":\"x\",\"n\":[1,{}]}'::jsonb AS doc")
  const row = rows[0]
  t.ok(row?.at instanceof Date)
  t.equal(row?.at.toISOString(), '2024-05-06T07:08:09.123Z')
  t.equal(row?.ats[0]?.toISOString(), '2020-01-01T00:00:00.000Z')
  t.same([...(row?.bytes ?? [])], [0, 255])
  t.same(row?.doc, { at: 'x', n: [1, {}] })
})

t.test('a row that cannot be delivered answers an error, and the next call works', async (t) => {
  const db = await sharedDb()
  if (writesNested(20_000)) {
    // Nothing is undeliverable here at this depth: the row comes whole.
    const { rows } = await within(db.query<{ j: unknown }>(UNWRITABLE))
    t.equal(JSON.stringify(rows[0]?.j).length, 20_000 * 6 + 1)
  } else {
    await t.rejects(within(db.query(UNWRITABLE)), { code: 'DATABASE_ROW_UNDELIVERABLE' })
  }
  t.same((await within(db.query('SELECT 2 AS two'))).rows, [{ two: 2 }])
})
