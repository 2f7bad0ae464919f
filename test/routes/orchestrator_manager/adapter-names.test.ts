import t from 'tap'
import fc from 'fast-check'
import { adminAuth, buildTestApp, testDatabases, type TestApp } from '../../helper.js'
import { createAdapter, nsoAdapter, startNso } from '../../helpers/nso.js'

const YANG_JSON = 'application/yang-data+json'
const URL_BASE = '/orchestrator_manager/adapters'

async function inject (app: TestApp, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) {
  return await app.inject({ method, url, headers: { authorization: adminAuth }, ...(payload === undefined ? {} : { payload }) })
}

// Ids that must be refused whatever else they hold: a '/', a backslash, '%', '?', '#', control
// characters, a leading or trailing space, empty, or longer than 128 characters.
const refusedId = fc.oneof(
  fc.tuple(fc.string({ maxLength: 20 }), fc.constantFrom('/', '\\', '%', '?', '#', '\u0000', '\n', '\r', '\t', '\u007f', '\u0085'), fc.string({ maxLength: 20 }))
    .map(([a, bad, b]) => `x${a}${bad}${b}`),
  fc.string({ minLength: 1, maxLength: 20 }).map((s) => ` ${s}`),
  fc.string({ minLength: 1, maxLength: 20 }).map((s) => `${s} `),
  fc.constant(''),
  fc.integer({ min: 129, max: 4000 }).map((n) => 'n'.repeat(n))
)
// Anything at all, including ids that are valid.
const anyId = fc.oneof(refusedId, fc.string({ maxLength: 140 }), fc.string({ maxLength: 140, unit: 'binary' }))

for (const database of testDatabases) {
  t.test(`adapter names as users write them, on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database })
    const nso = await startNso(t)

    t.test('"Local NSO": created, read, used by restQuery and deleted through its URL-encoded path', async (t) => {
      const created = await createAdapter(app, nsoAdapter('Local NSO', nso))
      t.equal(created.json().id, 'Local NSO')
      const path = `${URL_BASE}/${encodeURIComponent('Local NSO')}`
      t.equal(path, `${URL_BASE}/Local%20NSO`)
      t.equal((await inject(app, 'GET', path)).json().id, 'Local NSO')
      t.equal((await inject(app, 'PUT', path, { timeoutMs: 5000 })).json().timeoutMs, 5000)

      const query = await inject(app, 'POST', '/orchestrator_manager/restQuery/Local%20NSO', {
        params: { path: '/restconf/data/tailf-ncs:devices/device=ce0/address', accept: YANG_JSON }
      })
      t.equal(query.statusCode, 200)
      t.same(query.json(), { 'tailf-ncs:address': '127.0.0.1' })
      t.equal(nso.received.at(-1)?.headers.authorization, nso.authorization)

      const listed = (await inject(app, 'GET', URL_BASE)).json() as { items: Array<{ id: string }> }
      t.ok(listed.items.some((a) => a.id === 'Local NSO'), 'listed under its name')

      t.same((await inject(app, 'DELETE', path)).json(), { deleted: true })
      t.equal((await inject(app, 'GET', path)).statusCode, 404)
      const gone = await inject(app, 'POST', '/orchestrator_manager/restQuery/Local%20NSO', {
        params: { path: '/restconf/data', accept: YANG_JSON }
      })
      t.equal(gone.statusCode, 404)
      t.equal(gone.json().message, 'Orchestrator adapter "Local NSO" not found')
    })

    t.test('names of other scripts, punctuation and the longest length; ids of the earlier rule still valid', async (t) => {
      for (const id of ['nso-lab_2', 'nso.lab', 'NSO Zürich (lab)', 'nso@dc1: core, edge & co', 'ñ', '7', 'x'.repeat(128)]) {
        const created = await inject(app, 'POST', URL_BASE, nsoAdapter(id, nso))
        t.equal(created.statusCode, 200, id)
        const read = await inject(app, 'GET', `${URL_BASE}/${encodeURIComponent(id)}`)
        t.equal(read.json().id, id, `${id}: read back through its encoded path`)
        t.equal((await inject(app, 'DELETE', `${URL_BASE}/${encodeURIComponent(id)}`)).statusCode, 200, id)
      }
    })

    t.test('the table itself refuses what the API refuses, whoever writes it', async (t) => {
      for (const id of ['a/b', ' a', 'a ', 'a\nb', '', 'x'.repeat(129)]) {
        await t.rejects(app.db.query(
          "INSERT INTO orchestrator_adapters (id, base_url, username, password_sealed, timeout_ms) VALUES ($1, 'http://x', 'u', 'p', 1000)", [id]
        ), JSON.stringify(id))
      }
    })

    t.test('hostile ids: a 400 naming the id, nothing created, never a 500', async (t) => {
      await fc.assert(fc.asyncProperty(refusedId, async (id) => {
        const response = await inject(app, 'POST', URL_BASE, nsoAdapter(id, nso))
        if (response.statusCode !== 400) throw new Error(`${JSON.stringify(id)}: ${response.statusCode} ${response.body}`)
        if (!/body\/id/.test(response.json().message as string)) throw new Error(`message does not name the id: ${response.body}`)
      }), { numRuns: 150 })
      // In a path: refused (400), absent (404), or a parameter longer than any valid id can encode
      // to (414): never anything else.
      await fc.assert(fc.asyncProperty(anyId, fc.constantFrom('GET', 'PUT', 'DELETE', 'restQuery') as fc.Arbitrary<string>, async (id, op) => {
        // An empty id is the list's own path, and '.' or '..' are dot segments the URL resolves to
        // the list or above it (no id can be either: an id starts with a letter or digit).
        fc.pre(id !== '' && id !== '.' && id !== '..')
        const encoded = encodeURIComponent(id)
        const response = op === 'restQuery'
          ? await inject(app, 'POST', `/orchestrator_manager/restQuery/${encoded}`, { params: { path: '/restconf/data', accept: YANG_JSON } })
          : await inject(app, op as 'GET' | 'PUT' | 'DELETE', `${URL_BASE}/${encoded}`, op === 'PUT' ? { timeoutMs: 1000 } : undefined)
        if (![400, 404, 414].includes(response.statusCode)) {
          throw new Error(`${op} ${JSON.stringify(id)}: ${response.statusCode} ${response.body}`)
        }
      }), { numRuns: 300 })
      const listed = (await inject(app, 'GET', URL_BASE)).json() as { total: number }
      t.equal(listed.total, 0, 'nothing was created')
    })
  })
}
