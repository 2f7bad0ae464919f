// A span per statement, transaction and advisory-lock wait, on both databases alike.
import t from 'tap'
import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node'
import { openDatabase } from '../../../plugins/database/index.js'
import { operationOf, tracedDb } from '../../../plugins/database/traced.js'
import { createTestDatabase, testConfig, testDatabases } from '../../helper.js'

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())

t.test('the operation is the first keyword, past comments', async (t) => {
  t.equal(operationOf('  select 1'), 'SELECT')
  t.equal(operationOf('-- why\n  WITH x AS (SELECT 1) SELECT * FROM x'), 'WITH')
  t.equal(operationOf('(SELECT 1)'), 'SQL')
})

for (const kind of testDatabases) {
  t.test(`on ${kind}`, async (t) => {
    const database = await createTestDatabase(t, kind)
    const raw = await openDatabase(testConfig(database.env))
    t.teardown(async () => { await raw.close() })
    const exporter = new InMemorySpanExporter()
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
    const tracer = provider.getTracer('test')
    const db = tracedDb(raw, tracer)
    t.equal(db.kind, raw.kind)
    t.same(db.poolStats(), raw.poolStats())
    t.equal(db.maintenance, raw.maintenance)

    const parent = tracer.startSpan('caller')
    await context.with(trace.setSpan(context.active(), parent), async () => {
      await db.exec('CREATE TABLE traced_t (n int)')
      await db.transaction(async (tx) => {
        await tx.query('INSERT INTO traced_t VALUES ($1)', [41])
        await tx.exec('UPDATE traced_t SET n = n + 1')
      })
      const locked = await db.withAdvisoryLock('traced', async () => (await db.query<{ n: number }>('SELECT n FROM traced_t')).rows[0]?.n)
      t.equal(locked, 42)
    })
    parent.end()
    const spans = exporter.getFinishedSpans()
    const named = (name: string) => spans.filter((s) => s.name === name)
    const callerId = parent.spanContext().spanId
    t.equal(named('SCRIPT').length, 2, 'exec, in and out of a transaction')
    const transaction = named('transaction')[0]
    t.equal(transaction?.parentSpanContext?.spanId, callerId)
    t.equal(named('INSERT')[0]?.parentSpanContext?.spanId, transaction?.spanContext().spanId, 'statements of a transaction are its children')
    t.equal(named('INSERT')[0]?.attributes['db.query.text'], 'INSERT INTO traced_t VALUES ($1)', 'the text, never the values')
    t.notOk(JSON.stringify(spans.map((s) => s.attributes)).includes('41'))
    t.equal(named('advisory lock')[0]?.parentSpanContext?.spanId, callerId)
    t.equal(named('SELECT')[0]?.parentSpanContext?.spanId, callerId, 'what runs under the lock is the caller\'s child')
    t.equal(named('SELECT')[0]?.attributes['db.response.returned_rows'], 1)

    // An error under the lock is the caller's: the wait itself went well.
    exporter.reset()
    await t.rejects(db.withAdvisoryLock('traced', async () => { throw new Error('inside') }), /inside/)
    t.equal(exporter.getFinishedSpans().find((s) => s.name === 'advisory lock')?.status.code, 0)
    // A lock that cannot be taken (its connection failed): the wait's span fails, and ends.
    exporter.reset()
    const failing = tracedDb({ ...raw, withAdvisoryLock: async () => { throw new Error('connection lost') } }, tracer)
    await t.rejects(failing.withAdvisoryLock('traced', async () => 1), /connection lost/)
    t.equal(exporter.getFinishedSpans().find((s) => s.name === 'advisory lock')?.status.code, 2, 'the wait failed')
  })
}
