// On the PostgreSQL server, a group with 10,000 versions among others': a page of its versions
// reads the primary key, never the whole table; so does the retention a change runs.
import t from 'tap'
import pg from 'pg'
import { buildTestApp, createTestDatabase, testDatabases } from '../../helper.js'
import { versionsSource } from '../../../plugins/studio/component-group-history.js'
import { REPLACE_SQL, replaceParams } from '../../../plugins/studio/component-groups-repository.js'
import { DEFAULT_HISTORY, historyParams, VERSION_LIST } from '../../../lib/studio/history.js'
import { listStatements, type ListRequest } from '../../../lib/lists/list-query.js'
import { explain, indexes, nodes, types } from '../../helpers/plans.js'

const GROUP = '000000000000000000000001'
const VERSIONS = 10_000

if (testDatabases.includes('postgres')) {
  t.test('history statements use their indexes at scale', async (t) => {
    const database = await createTestDatabase(t, 'postgres')
    await buildTestApp(t, { database }) // runs the migrations
    const client = new pg.Client({ connectionString: database.env.DATABASE_URL })
    await client.connect()
    t.teardown(async () => { await client.end() })
    await client.query(`INSERT INTO component_groups (id, name, gbac_read, doc, version)
      VALUES ('${GROUP}', 'Many versions', ARRAY['netops'], '{"description":"","members":[],"meta":{}}', ${VERSIONS})`)
    // The group's versions, and 2,000 other groups with 10 each (a tenth of them deleted).
    await client.query(`INSERT INTO component_group_versions (group_id, version, action, actor, auth_method, name, gbac_read, gbac_write, doc)
      SELECT '${GROUP}', v, 'replace', 'ann', 'basic', 'Many versions', ARRAY['netops'], '{}', '{"description":"","members":[],"meta":{}}'
      FROM generate_series(1, ${VERSIONS}) AS v`)
    await client.query(`INSERT INTO component_group_versions (group_id, version, action, actor, auth_method, name, gbac_read, gbac_write, doc)
      SELECT lpad(to_hex(g + 16), 24, '0'), v, CASE WHEN v = 10 AND g % 10 = 0 THEN 'delete' ELSE 'replace' END, 'ann', 'basic',
        'Group ' || g, '{}', '{}', '{"description":"","members":[],"meta":{}}'
      FROM generate_series(1, 2000) AS g, generate_series(1, 10) AS v`)
    await client.query('VACUUM ANALYZE component_group_versions')

    const request: ListRequest = { limit: 25, skip: 0, maxBytes: 8 << 20, sort: 'version', order: -1, filters: [], projection: { kind: 'all' } }
    for (const [name, user] of [['admin', { roles: ['admin'], groups: [] }], ['reader', { roles: [], groups: ['netops'] }]] as const) {
      for (const withDocument of [false, true]) {
        const { page } = listStatements(VERSION_LIST, request, versionsSource(user, GROUP, withDocument))
        const plan = nodes(await explain(client, page.text, page.params))
        t.notOk(types(plan).includes('Seq Scan'), `${name}: a page of versions reads no table from end to end (${types(plan).join(', ')})`)
        t.ok(indexes(plan).includes('component_group_versions_pkey'), `${name}: through the primary key (${indexes(plan).join(', ')})`)
      }
    }
    // A change's retention looks at the oldest few versions of its group only.
    const replace = nodes(await explain(client, REPLACE_SQL, replaceParams({ roles: ['admin'], groups: [] }, GROUP,
      { name: 'Many versions', description: '', members: [], gbacRead: ['netops'], gbacWrite: [], meta: {} }, undefined,
      historyParams('replace', { username: 'ann', method: 'basic' }, DEFAULT_HISTORY))))
    t.notOk(types(replace).includes('Seq Scan'), `a replacement and its retention scan no table (${types(replace).join(', ')})`)
    t.ok(indexes(replace).includes('component_group_versions_pkey'), 'retention goes through the primary key')
  })
}
