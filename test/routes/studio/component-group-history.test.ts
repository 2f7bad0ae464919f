// Component-group history through the HTTP API: versions, restore, deleted groups, GBAC,
// retention, on both databases and across two instances.
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import fc from 'fast-check'
import pg from 'pg'
import { adminAuth, buildTestApp, createTestDatabase, createUser, testDatabases, type TestApp } from '../../helper.js'
import { PRUNE_BATCH, PRUNE_EVERY } from '../../../lib/studio/history.js'

const BASE = '/studio/component-groups'
const MISSING = '0123456789abcdef01234567'

type Doc = Record<string, unknown> & { _id: string, version: number, name: string }
interface Entry { _id: string, version: number, action: string, actor: { username: string, method: string }, changedAt: string, name: string, document?: Doc }
interface Page { items: Entry[], count: number, total: number, next: number | null }

const group = (name: string, more: Record<string, unknown> = {}) => ({ name, gbacRead: [], members: [], ...more })

async function create (app: TestApp, auth: string, body: Record<string, unknown>): Promise<Doc> {
  const response = await app.inject({ method: 'POST', url: BASE, headers: { authorization: auth }, payload: { componentGroup: body } })
  if (response.statusCode !== 200) throw new Error(`create: ${response.statusCode} ${response.body}`)
  return response.json().created
}

async function replace (app: TestApp, auth: string, id: string, body: Record<string, unknown>, ifMatch?: string) {
  return await app.inject({
    method: 'PUT', url: `${BASE}/${id}`, headers: { authorization: auth, ...(ifMatch === undefined ? {} : { 'if-match': ifMatch }) }, payload: { update: body }
  })
}

async function versions (app: TestApp, auth: string, id: string, query = ''): Promise<{ statusCode: number, page: Page }> {
  const response = await app.inject({ url: `${BASE}/${id}/versions${query}`, headers: { authorization: auth } })
  return { statusCode: response.statusCode, page: response.json() }
}

async function restore (app: TestApp, auth: string, id: string, version: number | string, ifMatch?: string) {
  return await app.inject({
    method: 'POST', url: `${BASE}/${id}/versions/${version}/restore`, headers: { authorization: auth, ...(ifMatch === undefined ? {} : { 'if-match': ifMatch }) }
  })
}

for (const database of testDatabases) {
  t.test(`component-group history on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database })
    const dana = await createUser(app, { username: 'dana', roles: ['designer'], groups: ['netops'] })
    const otto = await createUser(app, { username: 'otto', roles: ['designer'], groups: ['other'] })
    const rita = await createUser(app, { username: 'rita', groups: ['netops'] })

    t.test('every change is a version, newest first, with who, when and how', async (t) => {
      const doc = await create(app, dana, group('History one', { description: 'first' }))
      t.equal((await replace(app, dana, doc._id, group('History one', { description: 'second' }))).statusCode, 200)
      t.equal((await replace(app, adminAuth, doc._id, group('History one renamed', { description: 'third' }))).statusCode, 200)
      const { statusCode, page } = await versions(app, dana, doc._id)
      t.equal(statusCode, 200)
      t.same(page.items.map((e) => [e.version, e.action, e.actor.username, e.name]), [
        [3, 'replace', 'admin', 'History one renamed'],
        [2, 'replace', 'dana', 'History one'],
        [1, 'create', 'dana', 'History one']
      ])
      t.equal(page.total, 3)
      t.equal(page.items[0]?.actor.method, 'basic')
      t.ok(page.items.every((e) => e.document === undefined && !Number.isNaN(Date.parse(e.changedAt))), 'no documents unless asked')
      const withDocs = await versions(app, dana, doc._id, '?include=document&limit=2&skip=1')
      t.same(withDocs.page.items.map((e) => [e.version, e.document?.description, e.document?.version]), [[2, 'second', 2], [1, 'first', 1]])
      t.same(Object.keys(withDocs.page.items[0] ?? {}).sort(), ['document', 'version'])
      t.equal(withDocs.page.next, null)
      const one = await app.inject({ url: `${BASE}/${doc._id}/versions/1`, headers: { authorization: rita } })
      t.equal(one.statusCode, 200)
      t.match(one.json(), { _id: doc._id, version: 1, action: 'create', document: { _id: doc._id, version: 1, description: 'first', name: 'History one' } })
      const none = await app.inject({ url: `${BASE}/${doc._id}/versions/9`, headers: { authorization: rita } })
      t.equal(none.statusCode, 404)
      t.equal(none.json().code, 'COMPONENT_GROUP_VERSION_NOT_FOUND')
      t.equal((await versions(app, dana, doc._id, '?include=nope')).statusCode, 400)
      t.equal((await versions(app, dana, doc._id, '?sort=version')).statusCode, 400)
    })

    t.test('a change\'s time reads as ISO 8601 in UTC, in milliseconds cut as a Date cuts them', async (t) => {
      const doc = await create(app, dana, group('History timed'))
      await app.db.query("UPDATE component_group_versions SET changed_at = '2026-01-31 12:00:59.123999+05' WHERE group_id = $1", [doc._id])
      const { page } = await versions(app, dana, doc._id)
      const deep = await versions(app, dana, doc._id, '?include=document,changedAt')
      const one = await app.inject({ url: `${BASE}/${doc._id}/versions/1`, headers: { authorization: dana } })
      const expected = new Date('2026-01-31T12:00:59.123999+05:00').toISOString()
      t.equal(expected, '2026-01-31T07:00:59.123Z')
      t.same([page.items[0]?.changedAt, deep.page.items[0]?.changedAt, one.json().changedAt], [expected, expected, expected])
    })

    t.test('restore makes an old content the next version, as a change like any other', async (t) => {
      const doc = await create(app, dana, group('Restored', { description: 'v1', gbacRead: ['netops'] }))
      await replace(app, dana, doc._id, group('Restored', { description: 'v2', gbacRead: ['netops'] }))
      const stale = await restore(app, dana, doc._id, 1, '"1"')
      t.equal(stale.statusCode, 409)
      t.equal(stale.json().code, 'VERSION_CONFLICT')
      const restored = await restore(app, dana, doc._id, 1, '"2"')
      t.equal(restored.statusCode, 200, restored.body)
      t.equal(restored.headers.etag, '"3"')
      t.match(restored.json().updated, { version: 3, description: 'v1' })
      const { page } = await versions(app, dana, doc._id, '?limit=1')
      t.match(page.items[0], { version: 3, action: 'restore', actor: { username: 'dana' } })
      t.equal(page.total, 3)
      // Others' access is that of the group now: otto reads nothing of it; rita may not write.
      t.equal((await versions(app, otto, doc._id)).statusCode, 404)
      t.equal((await app.inject({ url: `${BASE}/${doc._id}/versions/1`, headers: { authorization: otto } })).statusCode, 404)
      t.equal((await restore(app, otto, doc._id, 1)).statusCode, 404)
      t.equal((await restore(app, rita, doc._id, 1)).statusCode, 403)
      t.equal((await restore(app, dana, doc._id, 42)).json().code, 'COMPONENT_GROUP_VERSION_NOT_FOUND')
      // The name stays unique: an old name now another group's is refused, nothing changes.
      await replace(app, dana, doc._id, group('Restored later', { gbacRead: ['netops'] }))
      await create(app, dana, group('Restored'))
      const taken = await restore(app, dana, doc._id, 1)
      t.equal(taken.statusCode, 409)
      t.equal(taken.json().code, 'NAME_TAKEN')
      t.equal((await versions(app, dana, doc._id)).page.total, 4)
      // Opened to everyone by a version's lists? No: the version is shown with the lists of now.
      await replace(app, dana, doc._id, group('Restored later', { gbacRead: ['secret'] }))
      t.equal((await versions(app, dana, doc._id)).statusCode, 404, 'the group is now out of reach')
      t.equal((await versions(app, adminAuth, doc._id)).page.total, 5)
    })

    t.test('deleted groups: listed for admins, their history kept, restored under their id', async (t) => {
      const doc = await create(app, dana, group('Deleted one', { description: 'kept' }))
      await replace(app, dana, doc._id, group('Deleted one', { description: 'kept twice' }))
      const deleted = await app.inject({ method: 'DELETE', url: `${BASE}/${doc._id}`, headers: { authorization: dana } })
      t.equal(deleted.statusCode, 200)
      const list = await app.inject({ url: `${BASE}/deleted?include=document`, headers: { authorization: adminAuth } })
      t.equal(list.statusCode, 200)
      const entry = (list.json() as Page).items.find((e) => e._id === doc._id)
      t.match(entry, { _id: doc._id, document: { version: 3, description: 'kept twice', name: 'Deleted one' } })
      t.equal((await app.inject({ url: `${BASE}/deleted`, headers: { authorization: dana } })).statusCode, 403)
      t.equal((await versions(app, dana, doc._id)).statusCode, 404, 'a deleted group is not there for others')
      const history = await versions(app, adminAuth, doc._id)
      t.same(history.page.items.map((e) => [e.version, e.action]), [[3, 'delete'], [2, 'replace'], [1, 'create']])
      t.equal((await app.inject({ url: `${BASE}/${doc._id}/versions/1`, headers: { authorization: adminAuth } })).statusCode, 200)
      t.equal((await app.inject({ url: `${BASE}/${doc._id}/versions/7`, headers: { authorization: adminAuth } })).json().code,
        'COMPONENT_GROUP_VERSION_NOT_FOUND')
      t.equal((await restore(app, dana, doc._id, 1)).statusCode, 404, 'only admins bring back a deleted group')
      t.equal((await restore(app, adminAuth, doc._id, 1, '"2"')).statusCode, 409, 'If-Match names the delete version')
      t.equal((await restore(app, adminAuth, doc._id, 9)).json().code, 'COMPONENT_GROUP_VERSION_NOT_FOUND')
      const back = await restore(app, adminAuth, doc._id, 1, '"3"')
      t.equal(back.statusCode, 200, back.body)
      t.match(back.json().updated, { _id: doc._id, version: 4, description: 'kept' })
      t.equal((await app.inject({ url: `${BASE}/${doc._id}`, headers: { authorization: dana } })).statusCode, 200)
      const after = await app.inject({ url: `${BASE}/deleted`, headers: { authorization: adminAuth } })
      t.notOk((after.json() as Page).items.some((e) => e._id === doc._id), 'no longer deleted')
      t.equal((await restore(app, adminAuth, doc._id, 3, '"3"')).statusCode, 409, 'the current version is 4 now')
      // Deleted again, its name taken meanwhile: it cannot come back under it.
      await app.inject({ method: 'DELETE', url: `${BASE}/${doc._id}`, headers: { authorization: adminAuth } })
      await create(app, dana, group('Deleted one'))
      const taken = await restore(app, adminAuth, doc._id, 4)
      t.equal(taken.statusCode, 409)
      t.equal(taken.json().code, 'NAME_TAKEN')
      t.equal((await restore(app, adminAuth, MISSING, 1)).statusCode, 404)
      t.equal((await versions(app, adminAuth, MISSING)).statusCode, 404)
      t.equal((await app.inject({ url: `${BASE}/${MISSING}/versions/1`, headers: { authorization: adminAuth } })).json().code, 'COMPONENT_GROUP_NOT_FOUND')
    })

    t.test('imports are versions too, and a failed import leaves no history', async (t) => {
      const response = await app.inject({
        method: 'POST', url: `${BASE}/import`, headers: { authorization: dana }, payload: { componentGroups: [group('Imported history')] }
      })
      t.equal(response.statusCode, 200)
      const id = response.json().imported[0].created._id as string
      t.match((await versions(app, dana, id)).page.items, [{ version: 1, action: 'import', actor: { username: 'dana' } }])
    })

    t.test('hostile ids, versions and queries: 400 or 404, never a 500', async (t) => {
      const doc = await create(app, dana, group('Hostile history'))
      const segment = fc.oneof(
        fc.string({ maxLength: 30 }),
        fc.constantFrom('0', '-1', '1', '1e3', '2147483648', '99999999999999999999', 'NaN', '0x1', '%00', doc._id, MISSING, 'deleted'),
        fc.integer().map(String)
      )
      // (A version's GET takes no query string; the list's hostile queries are the list tests'.)
      await fc.assert(fc.asyncProperty(fc.constantFrom(doc._id, MISSING, 'x'), segment, fc.boolean(), async (id, version, post) => {
        const url = `${BASE}/${encodeURIComponent(id)}/versions/${encodeURIComponent(version)}${post ? '/restore' : ''}`
        const response = await app.inject({ method: post ? 'POST' : 'GET', url, headers: { authorization: dana } })
        return [200, 400, 404, 409].includes(response.statusCode)
      }), { numRuns: 120 })
      t.pass('no 500 over the runs')
    })
  })

  t.test(`retention on ${database}: the oldest versions go, a few per change; 0 records nothing`, async (t) => {
    const db = await createTestDatabase(t, database, { migrated: true })
    const app = await buildTestApp(t, { database: db, env: { STUDIO_HISTORY_MAX_VERSIONS: '3' } })
    const doc = await create(app, adminAuth, group('Kept three'))
    for (let i = 0; i < 5; i++) await replace(app, adminAuth, doc._id, group('Kept three', { description: `r${i}` }))
    const { page } = await versions(app, adminAuth, doc._id)
    t.same(page.items.map((e) => e.version), [6, 5, 4])
    await app.close()
    // Lowered to 1: each change removes at most a few of the oldest, then the limit holds.
    const lowered = await buildTestApp(t, { database: db, env: { STUDIO_HISTORY_MAX_VERSIONS: '1' } })
    await replace(lowered, adminAuth, doc._id, group('Kept three', { description: 'one' }))
    t.same((await versions(lowered, adminAuth, doc._id)).page.items.map((e) => e.version), [7])
    await lowered.close()
    const off = await buildTestApp(t, { database: db, env: { STUDIO_HISTORY_MAX_VERSIONS: '0' } })
    await replace(off, adminAuth, doc._id, group('Kept three', { description: 'unrecorded' }))
    const unrecorded = await create(off, adminAuth, group('Never recorded'))
    t.same((await versions(off, adminAuth, doc._id)).page.items.map((e) => e.version), [7], 'history off: nothing recorded or pruned')
    const empty = await versions(off, adminAuth, unrecorded._id)
    t.equal(empty.statusCode, 200, 'a group without history has an empty page')
    t.equal(empty.page.total, 0)
  })
}

for (const database of testDatabases) {
  t.test(`retention on ${database}: what a lowered limit left goes ${PRUNE_BATCH} at a time on every ${PRUNE_EVERY}th version`, async (t) => {
    const db = await createTestDatabase(t, database, { migrated: true })
    const app = await buildTestApp(t, { database: db, env: { STUDIO_HISTORY_MAX_VERSIONS: '12' } })
    const doc = await create(app, adminAuth, group('Lowered'))
    for (let v = 2; v <= 12; v++) await replace(app, adminAuth, doc._id, group('Lowered', { description: `v${v}` }))
    await app.close()
    const lowered = await buildTestApp(t, { database: db, env: { STUDIO_HISTORY_MAX_VERSIONS: '2' } })
    const kept = async (): Promise<number[]> => (await versions(lowered, adminAuth, doc._id)).page.items.map((e) => e.version)
    let version = 12
    const changeTo = async (target: number): Promise<void> => {
      for (; version < target; version++) {
        const response = await replace(lowered, adminAuth, doc._id, group('Lowered', { description: `l${version + 1}` }))
        if (response.statusCode !== 200) throw new Error(`replace: ${response.statusCode} ${response.body}`)
      }
    }
    // Version 13 removes by key the four its limit passed (8-11); the front is not looked at.
    await changeTo(13)
    t.same(await kept(), [13, 12, 7, 6, 5, 4, 3, 2, 1])
    // Version 16 removes 14 by key and the four oldest.
    await changeTo(16)
    t.same(await kept(), [16, 15, 7, 6, 5])
    await changeTo(24)
    t.same(await kept(), [24, 23], 'the limit holds again')
  })
}

for (const database of testDatabases) {
  t.test(`a change on one instance is in the history read on the other (${database})`, async (t) => {
    const db = await createTestDatabase(t, database, { migrated: true })
    const one = await buildTestApp(t, { database: db })
    if (database === 'embedded') {
      // The embedded database has one process; the second instance reads it after the first closes.
      const doc = await create(one, adminAuth, group('Two instances'))
      await replace(one, adminAuth, doc._id, group('Two instances', { description: 'changed' }))
      await one.close()
      const two = await buildTestApp(t, { database: db })
      t.same((await versions(two, adminAuth, doc._id)).page.items.map((e) => e.version), [2, 1])
      return
    }
    const otherDataDir = await mkdtemp(path.join(os.tmpdir(), 'second-instance-'))
    t.teardown(async () => { await rm(otherDataDir, { recursive: true, force: true }) })
    const two = await buildTestApp(t, { database: db, env: { DATA_DIR: otherDataDir } })
    const doc = await create(one, adminAuth, group('Two instances'))
    // Concurrent changes through both instances: every one recorded once, in version order.
    const results = await Promise.all(Array.from({ length: 6 }, async (_, i) =>
      await replace(i % 2 === 0 ? one : two, adminAuth, doc._id, group('Two instances', { description: `c${i}` }))))
    t.same(results.map((r) => r.statusCode), [200, 200, 200, 200, 200, 200])
    const { page } = await versions(two, adminAuth, doc._id)
    t.same(page.items.map((e) => e.version), [7, 6, 5, 4, 3, 2, 1])
    const deleted = await one.inject({ method: 'DELETE', url: `${BASE}/${doc._id}`, headers: { authorization: adminAuth } })
    t.equal(deleted.statusCode, 200)
    const list = await two.inject({ url: `${BASE}/deleted`, headers: { authorization: adminAuth } })
    t.ok((list.json() as Page).items.some((e) => e._id === doc._id && e.action === 'delete' && e.version === 8))
  })
}

for (const database of testDatabases.filter((d) => d === 'postgres')) {
  t.test('writers queued on one group keep it at its limit', async (t) => {
    const db = await createTestDatabase(t, database)
    const app = await buildTestApp(t, { database: db, env: { STUDIO_HISTORY_MAX_VERSIONS: '20' } })
    const doc = await create(app, adminAuth, group('Busy'))
    // Waves of 16 concurrent changes: each waits on the row lock with a snapshot from before it
    // waited, in which the oldest versions it saw had often gone.
    for (let wave = 0; wave < 4; wave++) {
      const results = await Promise.all(Array.from({ length: 16 }, async (_, i) =>
        await replace(app, adminAuth, doc._id, group('Busy', { description: `w${wave}-${i}` }))))
      t.ok(results.every((r) => r.statusCode === 200), `wave ${wave} written`)
    }
    const { page } = await versions(app, adminAuth, doc._id)
    t.same(page.items.map((e) => e.version), Array.from({ length: 20 }, (_, i) => 65 - i), 'the newest 20 of 65, no more')
  })

  t.test('with STUDIO_HISTORY_MAX_AGE_DAYS, versions older than that go as the group changes', async (t) => {
    const db = await createTestDatabase(t, database)
    const app = await buildTestApp(t, { database: db, env: { STUDIO_HISTORY_MAX_AGE_DAYS: '30' } })
    const doc = await create(app, adminAuth, group('Aged'))
    await replace(app, adminAuth, doc._id, group('Aged', { description: 'second' }))
    const client = new pg.Client({ connectionString: db.env.DATABASE_URL })
    await client.connect()
    t.teardown(async () => { await client.end() })
    await client.query("UPDATE component_group_versions SET changed_at = now() - interval '31 days' WHERE group_id = $1 AND version = 1", [doc._id])
    t.same((await versions(app, adminAuth, doc._id)).page.items.map((e) => e.version), [2, 1], 'kept until the group changes')
    await replace(app, adminAuth, doc._id, group('Aged', { description: 'third' }))
    t.same((await versions(app, adminAuth, doc._id)).page.items.map((e) => e.version), [3, 2])
  })
}
