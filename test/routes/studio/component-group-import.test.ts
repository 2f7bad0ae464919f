// Imports on both databases: names that collide within one import and across imports, batches,
// the size bound, the time bound, and (embedded) other requests served while an import runs.
import t from 'tap'
import { adminAuth, buildTestApp, testDatabases, type TestApp } from '../../helper.js'
import { IMPORT_BATCH } from '../../../plugins/studio/import.js'

const BASE = '/studio/component-groups'
const group = (name: string) => ({ name, gbacRead: [], members: [] })

async function importGroups (app: TestApp, names: string[]): Promise<string[]> {
  const response = await app.inject({ method: 'POST', url: `${BASE}/import`, headers: { authorization: adminAuth }, payload: { componentGroups: names.map(group) } })
  if (response.statusCode !== 200) throw new Error(`import: ${response.statusCode} ${response.body}`)
  return response.json().imported.map((r: { created: { name: string } }) => r.created.name)
}

async function total (app: TestApp, query = ''): Promise<number> {
  return (await app.inject({ url: `${BASE}?limit=1&${query}`, headers: { authorization: adminAuth } })).json().total
}

for (const database of testDatabases) {
  t.test(`imports on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database, env: { STUDIO_IMPORT_MAX_GROUPS: '300' } })

    t.test('colliding names within one import and across imports get the next free suffixes', async (t) => {
      t.same(await importGroups(app, ['Dup', 'Dup', 'Other', 'Dup']), ['Dup', 'Dup (1)', 'Other', 'Dup (2)'])
      t.same(await importGroups(app, ['Dup', 'Other', 'Dup (1)', 'Dup']), ['Dup (3)', 'Other (1)', 'Dup (1) (1)', 'Dup (4)'])
      // A gap left by a deleted group is filled first.
      const listed = (await app.inject({ url: `${BASE}?equals=Dup%20(1)`, headers: { authorization: adminAuth } })).json().items[0]
      t.equal((await app.inject({ method: 'DELETE', url: `${BASE}/${listed._id}`, headers: { authorization: adminAuth } })).statusCode, 200)
      t.same(await importGroups(app, ['Dup', 'Dup']), ['Dup (1)', 'Dup (5)'])
      // A literal name that looks suffixed is a base of its own, and never taken twice.
      t.same(await importGroups(app, ['Lit (2)', 'Lit', 'Lit', 'Lit']), ['Lit (2)', 'Lit', 'Lit (1)', 'Lit (3)'])
      // LIKE metacharacters in a base are literal: "A_c" does not see "Abc (1)" as its own.
      await importGroups(app, ['Abc (1)'])
      t.same(await importGroups(app, ['A_c', 'A_c']), ['A_c', 'A_c (1)'])
    })

    t.test('an import of more than one batch of one name', async (t) => {
      const count = IMPORT_BATCH * 2 + 50
      const names = await importGroups(app, Array.from({ length: count }, () => 'Many'))
      t.same(names, ['Many', ...Array.from({ length: count - 1 }, (_, i) => `Many (${i + 1})`)])
      t.equal(await total(app, 'starts-with=Many'), count)
      const again = await importGroups(app, ['Many', 'Many'])
      t.same(again, [`Many (${count})`, `Many (${count + 1})`], 'the next import goes on after them')
    })

    t.test('the size bound is configurable and named; nothing is stored past it', async (t) => {
      const before = await total(app)
      const response = await app.inject({ method: 'POST', url: `${BASE}/import`, headers: { authorization: adminAuth }, payload: { componentGroups: Array.from({ length: 301 }, (_, i) => group(`Over ${i}`)) } })
      t.equal(response.statusCode, 400)
      t.match(response.json(), { code: 'IMPORT_TOO_LARGE', message: /body\/componentGroups must NOT have more than 300 items \(got 301\)/ })
      t.equal(await total(app), before)
    })

    t.test('past its time an import stops and stores nothing', async (t) => {
      const before = await total(app)
      const outcome = await app.componentGroupsRepository.importAll(
        Array.from({ length: 150 }, (_, i) => ({ name: `Late ${i}`, description: '', members: [], gbacRead: [], gbacWrite: [], meta: {} })), 0, { username: 'admin', method: 'basic' })
      t.same(outcome, { refusal: 'timeout' })
      t.equal(await total(app), before)
    })

    if (database === 'embedded') {
      t.test('other requests are served between the batches of an import', async (t) => {
        await total(app) // credentials verified and remembered
        const order: string[] = []
        const importing = importGroups(app, Array.from({ length: 300 }, (_, i) => `Yield ${i}`)).then(() => { order.push('import') })
        const reading = total(app).then(() => { order.push('read') })
        await Promise.all([importing, reading])
        t.same(order, ['read', 'import'], 'a read issued during the import answers before it ends')
        t.equal(await total(app, 'starts-with=Yield'), 300)
      })
    }
  })
}
