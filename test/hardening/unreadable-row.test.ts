// A stored document that cannot be read (nested deeper than JSON text can be written, stored
// before the service had limits) answers an error and never hangs, on both databases.
import t from 'tap'
import { adminAuth, buildTestApp, testDatabases } from '../helper.js'
import { injectWithin, writesNested } from './hostile.js'

const DEADLINE_MS = '3000'

for (const database of testDatabases) {
  t.test(`a stored document that cannot be read answers an error, never hangs, on ${database}`, async (t) => {
    // The 500 of a document no client could have stored is expected here, and rightly not in the document.
    const app = await buildTestApp(t, { database, env: { DATABASE_QUERY_TIMEOUT_MS: DEADLINE_MS }, unlistedStatuses: [500] })
    const auth = { authorization: adminAuth }
    const ok = await injectWithin(app, { method: 'POST', url: '/studio/component-groups', headers: auth, payload: { componentGroup: { name: 'fine', members: [], gbacRead: [] } } })
    t.equal(ok.statusCode, 200)
    const store = async (id: string, depth: number): Promise<void> => {
      await app.db.query(`INSERT INTO component_groups (id, name, gbac_read, gbac_write, doc)
        VALUES ($1, $1, '{}', '{}', jsonb_build_object('description', '', 'members', '[]'::jsonb, 'meta',
          (repeat('{"a":', $2) || '1' || repeat('}', $2))::jsonb))`, [id, depth])
    }
    // The document of the incident: 2,000 levels deep, stored before the service had limits. Read
    // back whole (the embedded database used to hang on it for good).
    const deep = 'eeeeeeeeeeeeeeeeeeeeeeee'
    await store(deep, 1999)
    const read = await injectWithin(app, { url: `/studio/component-groups/${deep}`, headers: auth })
    t.equal(read.statusCode, 200, 'a document stored 2,000 levels deep is read')
    let meta: unknown = (read.json() as { meta: unknown }).meta
    let depth = 0
    while (typeof meta === 'object' && meta !== null) { meta = (meta as { a: unknown }).a; depth++ }
    t.equal(depth, 1999, 'whole')
    if (database === 'embedded') {
      // Deeper than JSON text can be written from JavaScript (its stack); the server refuses to store that.
      const unreadable = 'ffffffffffffffffffffffff'
      await store(unreadable, 19000)
      const refused = await injectWithin(app, { url: `/studio/component-groups/${unreadable}`, headers: auth })
      if (writesNested(19000)) {
        // A runtime whose JSON has no depth limit (Node.js 26) delivers it whole.
        t.equal(refused.statusCode, 200, 'delivered whole where the runtime can write it')
        t.equal(refused.body.length > 19000 * 6, true)
      } else {
        t.ok(refused.statusCode >= 500, `a document that cannot be delivered answers an error (${refused.statusCode})`)
        t.notMatch(refused.body, /"a"/, 'no part of the document is echoed')
      }
    }
    t.equal((await injectWithin(app, { url: '/ready' })).statusCode, 200, 'the database still answers')
    const other = await injectWithin(app, { url: `/studio/component-groups/${(ok.json() as { created: { _id: string } }).created._id}`, headers: auth })
    t.equal(other.statusCode, 200, 'other documents are read as before')
    const login = await injectWithin(app, { url: '/users', headers: auth })
    t.equal(login.statusCode, 200, 'logins still work')
  })
}
