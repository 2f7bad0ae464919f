import t from 'tap'
import fc from 'fast-check'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { adminAuth, buildTestApp, testDatabases, type TestApp } from '../../helper.js'
import { createAdapter, nsoAdapter, startNso } from '../../helpers/nso.js'
import { MIGRATIONS_DIR } from '../../../plugins/database/index.js'
import { foldAdapterId } from '../../../lib/orchestrator/adapter-id.js'
import { adapterIdArb, lookAlikeOf } from '../../lib/orchestrator/adapter-id-arbitraries.js'

const YANG_JSON = 'application/yang-data+json'
const URL_BASE = '/orchestrator_manager/adapters'

async function inject (app: TestApp, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) {
  return await app.inject({ method, url, headers: { authorization: adminAuth }, ...(payload === undefined ? {} : { payload }) })
}

async function ids (app: TestApp): Promise<string[]> {
  return (await app.db.query<{ id: string }>('SELECT id FROM orchestrator_adapters ORDER BY id')).rows.map((r) => r.id)
}

for (const database of testDatabases) {
  t.test(`look-alike adapter ids, on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database })
    const nso = await startNso(t)

    t.test('creating a look-alike of an existing id is a 409 naming the existing one', async (t) => {
      await createAdapter(app, nsoAdapter('Local NSO', nso))
      await createAdapter(app, nsoAdapter('NSO Zürich', nso))
      for (const [id, existing] of [
        ['Local  NSO', 'Local NSO'],
        ['LOCAL NSO', 'Local NSO'],
        ['local nso', 'Local NSO'],
        ['Ｌｏｃａｌ ＮＳＯ', 'Local NSO'],
        ['NSO Zu\u0308rich', 'NSO Zürich'],
        ['nso ZÜRICH', 'NSO Zürich']
      ] as const) {
        const response = await inject(app, 'POST', URL_BASE, nsoAdapter(id, nso))
        t.equal(response.statusCode, 409, id)
        t.match(response.json(), {
          code: 'ADAPTER_NAME_TAKEN',
          existingId: existing,
          message: `Orchestrator adapter "${id}" would be a look-alike of adapter "${existing}": ids differing only in case, spacing or Unicode form are the same id`
        }, id)
      }
      const same = await inject(app, 'POST', URL_BASE, nsoAdapter('Local NSO', nso))
      t.equal(same.statusCode, 409)
      t.match(same.json(), { code: 'ADAPTER_EXISTS', message: 'Orchestrator adapter "Local NSO" already exists' })
      t.same(await ids(app), ['Local NSO', 'NSO Zürich'], 'nothing else was created')
    })

    t.test('a call by a look-alike id reaches no adapter: 404, and the adapter stays', async (t) => {
      for (const id of ['Local  NSO', 'local nso', 'Ｌｏｃａｌ ＮＳＯ']) {
        const encoded = encodeURIComponent(id)
        const query = await inject(app, 'POST', `/orchestrator_manager/restQuery/${encoded}`, { params: { path: '/restconf/data', accept: YANG_JSON } })
        t.equal(query.statusCode, 404, `restQuery ${id}`)
        t.equal(query.json().code, 'ADAPTER_NOT_FOUND')
        const action = await inject(app, 'POST', `/orchestrator_manager/restAction/${encoded}`, { params: { path: '/restconf/data', accept: YANG_JSON, method: 'GET' }, body: {} })
        t.equal(action.statusCode, 404, `restAction ${id}`)
        t.equal((await inject(app, 'GET', `${URL_BASE}/${encoded}`)).statusCode, 404, `GET ${id}`)
        t.equal((await inject(app, 'PUT', `${URL_BASE}/${encoded}`, { timeoutMs: 1000 })).statusCode, 404, `PUT ${id}`)
        t.equal((await inject(app, 'DELETE', `${URL_BASE}/${encoded}`)).statusCode, 404, `DELETE ${id}`)
      }
      t.equal(nso.received.length, 0, 'nothing went upstream')
      const kept = (await inject(app, 'GET', `${URL_BASE}/Local%20NSO`)).json()
      t.equal(kept.timeoutMs, 30000, 'the adapter is unchanged')
    })

    t.test('any look-alike of a created id is refused, never created', async (t) => {
      const created = new Set(await ids(app))
      // An id whose folded key an earlier run already took is itself a look-alike: not a new original.
      const taken = new Set([...created].map(foldAdapterId))
      await fc.assert(fc.asyncProperty(adapterIdArb.chain((id) => fc.tuple(fc.constant(id), lookAlikeOf(id))), async ([id, alike]) => {
        fc.pre(!taken.has(foldAdapterId(id)))
        const first = await inject(app, 'POST', URL_BASE, nsoAdapter(id, nso))
        if (first.statusCode !== 200) throw new Error(`${JSON.stringify(id)}: ${first.statusCode} ${first.body}`)
        created.add(id)
        taken.add(foldAdapterId(id))
        const second = await inject(app, 'POST', URL_BASE, nsoAdapter(alike, nso))
        // 400: the look-alike breaks the id rule itself (a full-width '-', a no-break space).
        if (second.statusCode !== 409 && second.statusCode !== 400) {
          throw new Error(`${JSON.stringify(alike)} after ${JSON.stringify(id)}: ${second.statusCode} ${second.body}`)
        }
        if (second.statusCode === 409 && second.json().existingId !== undefined && second.json().existingId !== id) {
          throw new Error(`${JSON.stringify(alike)}: names ${second.body}, not ${JSON.stringify(id)}`)
        }
      }), { numRuns: 60 })
      t.same(await ids(app), [...created].sort((a, b) => a < b ? -1 : a > b ? 1 : 0), 'only the originals exist')
    })
  })

  t.test(`migration 011 and the start-up keys: existing look-alikes, on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database })
    const nso = await startNso(t)
    // The table as it was before migration 011.
    await app.db.query('ALTER TABLE orchestrator_adapters DROP COLUMN id_key')
    const legacy: Array<[string, string]> = [
      ['Ｎｓｏ', '2020-01-01'],
      ['nso', '2020-01-02'],
      ['NSO', '2020-01-03'],
      ['Local  NSO', '2020-01-04'],
      ['local nso', '2020-01-05'],
      ['Zürich lab', '2020-01-06'],
      ['Zu\u0308rich lab', '2020-01-07'],
      ['nso-lab', '2020-01-08']
    ]
    // And ids of the earlier rule, to compare the migration's fold with the service's.
    const ascii = fc.sample(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 ._-]{0,30}[A-Za-z0-9]$/), { numRuns: 150, seed: 11 })
      .filter((id) => !legacy.some(([l]) => foldAdapterId(l) === foldAdapterId(id)))
    for (const [id, at] of [...legacy, ...ascii.map((id): [string, string] => [id, '2021-01-01'])]) {
      await app.db.query(
        "INSERT INTO orchestrator_adapters (id, base_url, username, password_sealed, timeout_ms, created_at) VALUES ($1, 'http://x', 'u', 'p', 1000, $2) ON CONFLICT DO NOTHING",
        [id, at])
    }
    await app.db.exec(await readFile(path.join(MIGRATIONS_DIR, '011-orchestrator-adapter-id-keys.sql'), 'utf8'))

    const keys = new Map((await app.db.query<{ id: string, id_key: string | null }>('SELECT id, id_key FROM orchestrator_adapters')).rows.map((r) => [r.id, r.id_key]))
    t.equal(keys.get('nso'), 'nso', 'the oldest ASCII id of a group takes the key')
    t.equal(keys.get('NSO'), null, 'a younger look-alike does not')
    t.equal(keys.get('Local  NSO'), 'local nso')
    t.equal(keys.get('local nso'), null)
    t.equal(keys.get('Ｎｓｏ'), null, 'ids beyond ASCII are left to the service')
    t.equal(keys.get('nso-lab'), 'nso-lab')
    const mismatched = [...keys].filter(([id, key]) => key !== null && key !== foldAdapterId(id))
    t.same(mismatched, [], 'every key the migration wrote is the service\'s fold')

    t.same(await app.adaptersRepository.claimKeys(), [
      { id: 'Ｎｓｏ', keyHeldBy: 'nso' },
      { id: 'NSO', keyHeldBy: 'nso' },
      { id: 'local nso', keyHeldBy: 'Local  NSO' },
      { id: 'Zu\u0308rich lab', keyHeldBy: 'Zürich lab' }
    ], 'the look-alikes, oldest first')
    const zurich = await app.db.query<{ id_key: string }>('SELECT id_key FROM orchestrator_adapters WHERE id = $1', ['Zürich lab'])
    t.equal(zurich.rows[0]?.id_key, 'zürich lab', 'the service keyed the id beyond ASCII')

    t.equal((await inject(app, 'GET', `${URL_BASE}/NSO`)).json().id, 'NSO', 'an existing look-alike still answers to its exact id')
    const refused = await inject(app, 'POST', URL_BASE, nsoAdapter('nSo', nso))
    t.match(refused.json(), { code: 'ADAPTER_NAME_TAKEN', existingId: 'nso' })
    t.match((await inject(app, 'POST', URL_BASE, nsoAdapter('NSO', nso))).json(), { code: 'ADAPTER_EXISTS' }, 'an exact id without a key is still taken')

    // Once the key's holder is gone, the oldest look-alike takes the key: no new look-alike slips in.
    t.equal((await inject(app, 'DELETE', `${URL_BASE}/nso`)).statusCode, 200)
    t.match((await inject(app, 'POST', URL_BASE, nsoAdapter('nSo', nso))).json(), { code: 'ADAPTER_NAME_TAKEN', existingId: 'Ｎｓｏ' })
    t.same(await app.adaptersRepository.claimKeys(), [{ id: 'NSO', keyHeldBy: 'Ｎｓｏ' }, { id: 'local nso', keyHeldBy: 'Local  NSO' }, { id: 'Zu\u0308rich lab', keyHeldBy: 'Zürich lab' }])
  })
}
