// GET /audit: filters, time range and paging on both databases; hostile filters; retention in
// batches; events written at close; two instances writing to one PostgreSQL server.
import t from 'tap'
import fc from 'fast-check'
import { adminAuth, buildTestApp, createTestDatabase, createUser, testDatabases, type TestApp } from '../../helper.js'
import type { AuditEvent as StoredEvent } from '../../../lib/audit/events.js'
import type { AuditEvent } from '../../../schemas/audit.js'
import { AUDIT_PRUNE_BATCH } from '../../../plugins/audit/index.js'

t.setTimeout(300_000)
const DAY = 86_400_000

function event (over: Partial<StoredEvent>): StoredEvent {
  return {
    at: Date.now(),
    actor: 'ann',
    serviceAccount: null,
    address: '192.0.2.1',
    requestId: 'req-1',
    action: 'user.update',
    target: 'bob',
    outcome: 'success',
    status: 200,
    durationMs: 1.5,
    details: null,
    ...over
  }
}

type Page = { items: AuditEvent[], total: number, next: number | null, count: number }
async function page (app: TestApp, query: string): Promise<Page> {
  const response = await app.inject({ method: 'GET', url: `/audit?${query}`, headers: { authorization: adminAuth } })
  if (response.statusCode !== 200) throw new Error(`GET /audit?${query}: ${response.statusCode} ${response.body}`)
  return response.json<Page>()
}

for (const database of testDatabases) {
  t.test(`GET /audit on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database })
    const base = Date.parse('2026-03-01T00:00:00Z')
    // 60 events, one a day from 2026-03-01: actors ann / bob in turn, three actions, ten targets.
    await app.audit.repository.insert(Array.from({ length: 60 }, (_, i) => event({
      at: base + i * DAY, actor: i % 2 === 0 ? 'ann' : 'bob', action: ['user.create', 'studio.replace', 'adapter.delete'][i % 3] as string, target: `t-${i % 10}`
    })))

    const newest = await page(app, 'limit=5')
    t.same(newest.items.map((e) => e.time.slice(0, 10)), ['2026-04-29', '2026-04-28', '2026-04-27', '2026-04-26', '2026-04-25'], 'newest first by default')
    t.equal(newest.total, 60)
    t.equal(newest.next, 5)
    t.same((await page(app, 'limit=2&order=1')).items.map((e) => e.time.slice(0, 10)), ['2026-03-01', '2026-03-02'])

    const ann = await page(app, 'equals=ann&equalsField=actor&limit=100')
    t.equal(ann.total, 30)
    t.ok(ann.items.every((e) => e.actor === 'ann'))
    const replaces = await page(app, 'equals=studio.replace&limit=100')
    t.equal(replaces.total, 20, 'action is the default field')
    const target = await page(app, 'equals=t-3&equalsField=target&limit=100')
    t.equal(target.total, 6)
    t.equal((await page(app, 'startsWith=studio.&limit=100')).total, 20)

    const march = await page(app, 'from=2026-03-10&to=2026-03-20&limit=100')
    t.equal(march.total, 10, 'from inclusive, to exclusive')
    t.same(march.items.map((e) => e.time.slice(0, 10)).at(-1), '2026-03-10')
    const combined = await page(app, 'from=2026-03-10T00:00:00Z&to=2026-03-20T00:00:00%2B00:00&equals=bob&equalsField=actor&limit=100')
    t.equal(combined.total, 5)

    // Paging on until next is null reads every event once.
    const seen: number[] = []
    for (let skip: number | null = 0; skip !== null;) {
      const p: Page = await page(app, `limit=7&skip=${skip}`)
      seen.push(...p.items.map((e) => e.id))
      skip = p.next
    }
    t.equal(new Set(seen).size, 60)
    t.same((await page(app, 'limit=1&include=action')).items, [{ id: newest.items[0]?.id, action: newest.items[0]?.action }], 'include')

    t.test('hostile filters: 400 naming the parameter, never a 500', async (t) => {
      const parameters = ['from', 'to', 'equals', 'equalsField', 'contains', 'sort', 'limit', 'skip', 'order', 'include', 'other']
      await fc.assert(fc.asyncProperty(fc.constantFrom(...parameters), fc.string({ unit: 'binary', maxLength: 60 }), async (parameter, value) => {
        const response = await app.inject({ method: 'GET', url: `/audit?${parameter}=${encodeURIComponent(value)}`, headers: { authorization: adminAuth } })
        if (response.statusCode === 200) return true
        const body = response.json<{ message: string }>()
        return response.statusCode === 400 && (body.message.includes(parameter) || body.message.includes('additional properties') || body.message.includes('NUL'))
      }), { numRuns: 150 })
      for (const [query, field] of [['from=2026-02-30', 'querystring/from'], ['to=2026-01-01T10:00', 'querystring/to'], ['from=2026-02-01&to=2026-01-01', 'querystring/from'],
        ['from=now', 'querystring/from'], ['sort=actor', 'querystring/sort'], ['equalsField=address&equals=x', 'querystring/equalsField']]) {
        const response = await app.inject({ method: 'GET', url: `/audit?${query as string}`, headers: { authorization: adminAuth } })
        t.equal(response.statusCode, 400, query)
        t.match(response.json(), { message: new RegExp(`^${field as string}`) }, query)
      }
    })

    t.test('admins only', async (t) => {
      const designer = await createUser(app, { username: 'dee', roles: ['designer'] })
      const response = await app.inject({ method: 'GET', url: '/audit', headers: { authorization: designer } })
      t.equal(response.statusCode, 403)
    })

    t.test('retention removes old events, a batch at a time, and nothing younger', async (t) => {
      const old = AUDIT_PRUNE_BATCH * 2 + 7
      await app.audit.repository.insert(Array.from({ length: old }, (_, i) => event({ at: Date.now() - 91 * DAY - i * 1000, action: 'old' })))
      await app.audit.repository.insert([event({ at: Date.now() - 89 * DAY, action: 'young' })])
      t.same(await app.audit.prune(), { deleted: old + 60, batches: 3 }, 'three statements (the 60 of 2026 are old too)')
      t.equal((await page(app, 'equals=old')).total, 0)
      t.equal((await page(app, 'equals=young')).total, 1)
      t.same(await app.audit.prune(), { deleted: 0, batches: 1 })
    })
  })
}

t.test('events queued at close are written before the database closes', async (t) => {
  const database = await createTestDatabase(t, 'embedded', { migrated: true })
  // A batch waits a minute unless full: what is written, close wrote.
  const first = await buildTestApp(t, { database, env: { AUDIT_FLUSH_INTERVAL_MS: '60000' } })
  for (let i = 0; i < 20; i++) await first.inject({ method: 'DELETE', url: `/users/nobody-${i}`, headers: { authorization: adminAuth } })
  t.match(first.audit.state(), { queued: 20, written: 0 }, 'queued, not yet written')
  await first.close()
  const second = await buildTestApp(t, { database })
  t.equal((await page(second, 'equals=user.delete&limit=100')).total, 20)
})

t.test('AUDIT_ENABLED=false records nothing', async (t) => {
  const app = await buildTestApp(t, { database: 'any', env: { AUDIT_ENABLED: 'false' } })
  await createUser(app, { username: 'quiet' })
  await app.inject({ method: 'GET', url: '/users' })
  await app.audit.flush()
  t.equal((await page(app, '')).total, 0)
  t.equal(app.audit.enabled, false)
})

if (testDatabases.includes('postgres')) {
  t.test('two instances on one PostgreSQL server, each with its own DATA_DIR, write to one trail', async (t) => {
    const database = await createTestDatabase(t, 'postgres')
    const one = await buildTestApp(t, { database })
    const other = await createTestDatabase(t, 'postgres')
    const two = await buildTestApp(t, { database: { kind: 'postgres', env: { ...database.env, DATA_DIR: other.env.DATA_DIR as string } } })
    await Promise.all(Array.from({ length: 40 }, async (_, i) => await (i % 2 === 0 ? one : two).inject({
      method: 'DELETE', url: `/users/ghost-${i}`, headers: { authorization: adminAuth }
    })))
    await Promise.all([one.audit.flush(), two.audit.flush()])
    for (const app of [one, two]) {
      const p = await page(app, 'equals=user.delete&limit=100')
      t.equal(p.total, 40, 'every event of both instances')
      t.equal(new Set(p.items.map((e) => e.target)).size, 40)
      t.equal(new Set(p.items.map((e) => e.id)).size, 40, 'ids unique across instances')
    }
  })
}
