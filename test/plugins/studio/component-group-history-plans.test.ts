// On the PostgreSQL server, a group with 10,000 versions among others': a page of its versions
// reads the primary key, never the whole table, and keeps its plan; so does the retention a
// change runs.
import t from 'tap'
import pg from 'pg'
import { buildTestApp, createTestDatabase, testDatabases } from '../../helper.js'
import { VERSION_ENTRY_MAX_BYTES, versionsSource } from '../../../plugins/studio/component-group-history.js'
import { REPLACE_SQL, replaceParams } from '../../../plugins/studio/component-groups-repository.js'
import { DEFAULT_HISTORY, historyParams } from '../../../lib/studio/history.js'
import type { ListRequest } from '../../../lib/lists/grammar.js'
import { listStatements } from '../../../lib/lists/statements.js'
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
    await client.query('VACUUM ANALYZE component_group_versions')
    const request: ListRequest = { limit: 25, skip: 0, maxBytes: 8 << 20, sort: 'version', order: -1, filters: [], projection: { kind: 'all' } }
    const admin = { roles: ['admin'], groups: [] }
    const reader = { roles: [], groups: ['netops'] }

    // The group alone in the table (its 10,000 versions are all the statistics know): a reader's
    // pages, prepared once, are planned once and the plan kept, as for the GET of a group; a plan
    // for the values on every call cost more than the rest of the statement. (An admin's page,
    // without the group's row to look at, is cheap enough to plan that PostgreSQL may plan each.)
    // Whichever it keeps reads the primary key for every group, its count too.
    for (const [name, user] of [['admin', admin], ['reader', reader]] as const) {
      for (const withDocument of [false, true]) {
        const statements = listStatements(request, versionsSource(user, GROUP, withDocument))
        t.equal(statements.keepsPlan, true)
        const statement = `page_${name}_${String(withDocument)}`
        for (let i = 0; i < 8; i++) {
          const { rows } = await client.query({ name: statement, text: statements.page.text, values: statements.page.params })
          t.equal(rows.length, 25)
        }
        const { rows: [kept] } = await client.query<{ generic_plans: string, custom_plans: string }>(
          'SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = $1', [statement])
        if (name === 'reader') t.ok(Number(kept?.generic_plans) >= 3, `${name}${withDocument ? ', with documents' : ''}: the plan is kept (${JSON.stringify(kept)})`)
        await client.query('SET plan_cache_mode = force_generic_plan')
        const generic = nodes(await explain(client, statements.page.text, statements.page.params))
        await client.query('RESET plan_cache_mode')
        t.ok(indexes(generic).includes('component_group_versions_pkey'), `${name}: the kept plan reads the primary key (${types(generic).join(', ')})`)
        t.notOk(types(generic).includes('Seq Scan'), `${name}: the kept plan reads no table from end to end`)
      }
    }
    t.ok(!listStatements(request, versionsSource(admin, GROUP, false)).page.text.includes('row_to_json'),
      'without documents the page is not measured: its rows cannot reach the byte bound')
    t.ok(listStatements(request, versionsSource(admin, GROUP, true)).page.text.includes('row_to_json'), 'with them it is')

    // The largest entry there can be, every text at its longest in characters of 6 bytes as
    // JSON: within the size the page counts on for each.
    const longest = '000000000000000000000002'
    await client.query(`INSERT INTO component_group_versions (group_id, version, action, actor, auth_method, client_id, changed_at, name, gbac_read, gbac_write, doc)
      VALUES ($1, 2147483647, 'restore', $2, 'bearer', $3, '294276-12-31 23:59:59.999999+00', $4, '{}', '{}', '{}')`,
    [longest, '\u0001'.repeat(64), 'f'.repeat(24), '\u0001'.repeat(255)])
    const measured = listStatements({ ...request, limit: 1 }, versionsSource(admin, longest, false)).page
    const { rows: [size] } = await client.query<{ bytes: number }>(`SELECT octet_length(row_to_json(p)::text) AS bytes FROM (${measured.text}) AS p`, measured.params)
    t.ok(size !== undefined && size.bytes > 1700 && size.bytes <= VERSION_ENTRY_MAX_BYTES, `the longest entry takes ${String(size?.bytes)} bytes of ${VERSION_ENTRY_MAX_BYTES}`)
    await client.query('DELETE FROM component_group_versions WHERE group_id = $1', [longest])

    await client.query(`INSERT INTO component_group_versions (group_id, version, action, actor, auth_method, name, gbac_read, gbac_write, doc)
      SELECT lpad(to_hex(g + 16), 24, '0'), v, CASE WHEN v = 10 AND g % 10 = 0 THEN 'delete' ELSE 'replace' END, 'ann', 'basic',
        'Group ' || g, '{}', '{}', '{"description":"","members":[],"meta":{}}'
      FROM generate_series(1, 2000) AS g, generate_series(1, 10) AS v`)
    await client.query('VACUUM ANALYZE component_group_versions')

    // A page of 25, and the studio page's "last change" of a listed group (its newest version, limit 1).
    for (const [name, user] of [['admin', admin], ['reader', reader]] as const) {
      for (const [what, limit, withDocument] of [['a page', 25, false], ['a page with documents', 25, true], ['the newest version', 1, false]] as const) {
        const { page } = listStatements({ ...request, limit }, versionsSource(user, GROUP, withDocument))
        const plan = nodes(await explain(client, page.text, page.params))
        t.notOk(types(plan).includes('Seq Scan'), `${name}, ${what}: reads no table from end to end (${types(plan).join(', ')})`)
        t.notOk(types(plan).includes('Sort'), `${name}, ${what}: no sort, the primary key is in version order (${types(plan).join(', ')})`)
        t.ok(indexes(plan).includes('component_group_versions_pkey'), `${name}, ${what}: through the primary key (${indexes(plan).join(', ')})`)
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
