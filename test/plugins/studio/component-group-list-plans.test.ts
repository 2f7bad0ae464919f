// On the PostgreSQL server with enough rows for the planner to care: a page reads its rows
// through an index (no sequential scan, no window function over every readable row), and the
// count is bounded. A change that brings back count(*) OVER () or loses an index fails here.
// On the embedded database, with its own statistics settings, the searches use the trigram index.
import t from 'tap'
import pg from 'pg'
import { buildTestApp, createTestDatabase, testDatabases } from '../../helper.js'
import { readableSource } from '../../../plugins/studio/component-groups-repository.js'
import { COMPONENT_GROUP_LIST } from '../../../schemas/component-groups.js'
import { parseListQuery, type ListQueryString } from '../../../lib/lists/grammar.js'
import { LIST_COUNT_LOOKAHEAD, listStatements } from '../../../lib/lists/statements.js'
import { pageEnvelope } from '../../../lib/lists/page.js'
import { explain as planOf, indexes, nodes, pageAndCarried, types, type PlanNode } from '../../helpers/plans.js'

const ROWS = 100_000
const TEAMS = 5_000 // each restricted to one team: 20 groups a team

const SEED = (rows: number, teams: number): string => `INSERT INTO component_groups (id, name, gbac_read, doc)
  SELECT lpad(to_hex(g), 24, '0'), 'Group ' || g,
    CASE WHEN g % 10000 = 0 THEN '{}'::text[] ELSE ARRAY['team-' || (g % ${teams})] END,
    '{"description":"","members":[],"meta":{}}'
  FROM generate_series(1, ${rows}) AS g`

// Its default_statistics_target is 30: a names' histogram that short made the planner guess that
// '%4242%' matches 550 of 100,000 names, and read the name index from the start instead
// (migrations/017).
t.test('on the embedded database, a search reads the trigram index', async (t) => {
  const app = await buildTestApp(t, { database: await createTestDatabase(t, 'embedded') })
  await app.db.query(SEED(ROWS, TEAMS))
  await app.db.exec('VACUUM ANALYZE component_groups')
  const frequent = await app.componentGroupsRepository.frequentNameTrigrams()
  const admin = { roles: ['admin'], groups: [] }
  for (const q of [{ contains: '4242' }, { contains: '4242', order: -1 }, { contains: 'oup 1234' }]) {
    const parsed = parseListQuery(COMPONENT_GROUP_LIST, { limit: 20, skip: 0, sort: 'name', order: 1, ...q }, app.config)
    if (!parsed.ok) throw new Error(parsed.reason)
    const { page } = listStatements(parsed.value, readableSource(admin), { name: frequent })
    const { rows } = await app.db.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> | string }>(`EXPLAIN (FORMAT JSON) ${page.text}`, page.params)
    const raw = rows[0]?.['QUERY PLAN']
    const plan = (typeof raw === 'string' ? JSON.parse(raw) as Array<{ Plan: PlanNode }> : raw)?.[0]?.Plan as PlanNode
    const { page: pageNodes } = pageAndCarried(plan)
    t.ok(indexes(pageNodes).includes('component_groups_name_trgm'), `${JSON.stringify(q)}: the trigram index (${indexes(pageNodes).join(', ')})`)
    t.notOk(types(pageNodes).includes('Seq Scan'), `${JSON.stringify(q)}: no table read from end to end`)
  }
})

if (testDatabases.includes('postgres')) {
  t.test('list statements use their indexes at scale', async (t) => {
    const database = await createTestDatabase(t, 'postgres')
    const app = await buildTestApp(t, { database }) // runs the migrations
    const client = new pg.Client({ connectionString: database.env.DATABASE_URL })
    await client.connect()
    t.teardown(async () => { await client.end() })
    // 10 public, the rest restricted to one team each.
    await client.query(SEED(ROWS, TEAMS))
    await client.query('VACUUM ANALYZE component_groups')

    // The trigrams every "Group N" has, as the repository reads them from the statistics.
    const frequent = await app.componentGroupsRepository.frequentNameTrigrams()
    const statements = (user: { roles: string[], groups: string[] }, q: Partial<ListQueryString>, trigrams = frequent) => {
      const parsed = parseListQuery(COMPONENT_GROUP_LIST, { limit: 25, skip: 0, sort: 'name', order: 1, ...q }, app.config)
      if (!parsed.ok) throw new Error(parsed.reason)
      return listStatements(parsed.value, readableSource(user), { name: trigrams })
    }
    const explain = async (user: { roles: string[], groups: string[] }, q: Partial<ListQueryString>) => {
      const { page, carriesTotal, count } = statements(user, q)
      const { page: pageNodes, carried } = pageAndCarried(await planOf(client, page.text, page.params))
      return { page: pageNodes, carriesTotal, carried, count: nodes(await planOf(client, count.text, count.params)) }
    }

    const admin = { roles: ['admin'], groups: [] }
    const reader = { roles: [], groups: ['team-7', 'team-8'] }
    // Sees the 10 public groups of 100,000 and nothing else.
    const fewReader = { roles: [], groups: ['team-none'] }
    const cases: Array<[string, { roles: string[], groups: string[] }, Partial<ListQueryString>, string[]]> = [
      ['first page', admin, {}, ['component_groups_name_key']],
      ['a deep page', admin, { skip: 20_000 }, ['component_groups_name_key']],
      ['by _id, descending', admin, { sort: '_id', order: -1 }, ['component_groups_pkey']],
      ['contains, rare', admin, { contains: 'oup 1234' }, ['component_groups_name_trgm']],
      ['starts-with', admin, { startsWith: 'group 29' }, []],
      ['equals', admin, { equals: 'Group 77' }, ['component_groups_name_key']],
      ['a reader who sees few groups', reader, {}, ['component_groups_public_name', 'component_groups_gbac_read']],
      ['a reader, contains', reader, { contains: 'oup 1' }, ['component_groups_gbac_read']],
      ['a reader who sees 10 of 100,000', fewReader, {}, ['component_groups_public_name', 'component_groups_gbac_read']],
      // The studio page's own calls (web/src/list.tsx): 20 a page, A–Z or Z–A, and its Search field.
      ['the page, A to Z', admin, { limit: 20 }, ['component_groups_name_key']],
      ['the page, Z to A', admin, { limit: 20, order: -1 }, ['component_groups_name_key']],
      ['the page, Z to A, its next page', admin, { limit: 20, skip: 20, order: -1 }, ['component_groups_name_key']],
      ['the page\'s Search', admin, { limit: 20, contains: '4242' }, ['component_groups_name_trgm']],
      ['the page\'s Search, Z to A', admin, { limit: 20, order: -1, contains: '4242' }, ['component_groups_name_trgm']],
      ['the page, a reader, Z to A', reader, { limit: 20, order: -1 }, ['component_groups_public_name', 'component_groups_gbac_read']],
      ['the page\'s Search, a reader', reader, { limit: 20, contains: '4242' }, ['component_groups_gbac_read']]
    ]
    for (const [name, user, q, expected] of cases) {
      const { page, carriesTotal, carried, count } = await explain(user, q)
      t.notOk(types(page).includes('Seq Scan'), `${name}: the page reads no table from end to end (${types(page).join(', ')})`)
      t.notOk(types(page).includes('WindowAgg'), `${name}: no window function`)
      for (const index of expected) t.ok(indexes(page).includes(index), `${name}: the page uses ${index} (${indexes(page).join(', ')})`)
      const filtered = Object.keys(q).some((k) => ['contains', 'startsWith', 'equals'].includes(k))
      t.equal(carriesTotal, !filtered, `${name}: the page carries its count only without filters`)
      t.equal(carried.length > 0, carriesTotal, `${name}: the carried count is in the plan exactly when the page carries it`)
      if (user === admin && !filtered) t.notOk(types(page).includes('Sort'), `${name}: carrying the count adds no sort (${types(page).join(', ')})`)
      for (const [what, plan] of [['count', count], ['carried count', carried]] as const) {
        if (plan.length === 0) continue
        t.notOk(types(plan).includes('WindowAgg'), `${name}: the ${what} has no window function`)
        t.ok(types(plan).includes('Limit'), `${name}: the ${what} is bounded`)
        if (user !== admin) t.notOk(types(plan).includes('Seq Scan'), `${name}: the reader's ${what} goes through the indexes`)
      }
    }

    t.test('the reader who sees 10 groups reads only index entries it may see', async (t) => {
      const { page } = statements(fewReader, {})
      const plan = nodes(((await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${page.text}`, page.params)).rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]?.Plan as PlanNode) as Array<PlanNode & { 'Actual Rows': number, 'Actual Loops': number }>
      const scans = plan.filter((n) => n['Index Name'] !== undefined)
      t.ok(scans.length > 0, 'the page reads indexes')
      for (const scan of scans) t.ok(scan['Actual Rows'] <= 10, `${scan['Index Name']}: ${scan['Actual Rows']} entries`)
    })

    t.test('the trigram index is written without a pending list, which every search would read whole', async (t) => {
      const { rows } = await client.query<{ reloptions: string[] | null }>(
        "SELECT reloptions FROM pg_class WHERE oid = 'component_groups_name_trgm'::regclass")
      t.same(rows[0]?.reloptions, ['fastupdate=off'])
    })

    t.test('contains with trigrams every name has: the index reads the part without them, the whole value filters', async (t) => {
      t.ok(['oup', 'up ', 'gro'].every((trigram) => frequent.has(trigram)), `the statistics know the frequent trigrams (${[...frequent].join('|')})`)
      interface Analyzed extends PlanNode { 'Index Cond'?: string, Filter?: string, 'Shared Hit Blocks': number, 'Shared Read Blocks': number, 'Actual Rows': number }
      const analyze = async (trigrams: ReadonlySet<string>) => {
        const { page } = statements(admin, { contains: 'oup 1234' }, trigrams)
        const plan = nodes(((await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${page.text}`, page.params)).rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]?.Plan as PlanNode) as Analyzed[]
        const scan = plan.find((n) => n['Node Type'] === 'Bitmap Index Scan' && n['Index Name'] === 'component_groups_name_trgm')
        if (scan === undefined) throw new Error(`no trigram index scan: ${plan.map((n) => n['Node Type']).join(', ')}`)
        return { scan, pages: scan['Shared Hit Blocks'] + scan['Shared Read Blocks'], rows: plan[0]?.['Actual Rows'], filter: plan.find((n) => n.Filter !== undefined)?.Filter }
      }
      const part = await analyze(frequent)
      const whole = await analyze(new Set())
      t.match(part.scan['Index Cond'], /'% 1234%'/, 'the index looks up " 1234"')
      t.match(part.filter, /'%oup 1234%'.*IS TRUE/, 'the whole value is tested on the rows found')
      t.equal(part.rows, 11, 'Group 1234 and Group 12340-12349')
      t.equal(whole.rows, part.rows, 'the same rows as the look-up of the whole value')
      t.ok(part.pages * 2 < whole.pages, `the index reads ${part.pages} pages, against ${whole.pages} for the whole value`)
    })

    t.test('past the count\'s bound, total is a lower bound that keeps clients paging, and exact at the end', async (t) => {
      const pageAt = async (skip: number) => {
        const parsed = parseListQuery(COMPONENT_GROUP_LIST, { limit: 25, skip, sort: 'name', order: 1 }, app.config)
        if (!parsed.ok) throw new Error(parsed.reason)
        const { items, total } = await app.componentGroupsRepository.list(admin, parsed.value)
        return pageEnvelope(items, parsed.value, total)
      }
      const first = await pageAt(0)
      t.equal(first.total, 25 + LIST_COUNT_LOOKAHEAD, 'a lower bound')
      t.equal(first.next, 25)
      const middle = await pageAt(10_000)
      t.equal(middle.total, 10_025 + LIST_COUNT_LOOKAHEAD, 'it grows as the client pages on')
      const last = await pageAt(ROWS - 10)
      t.same({ count: last.count, total: last.total, next: last.next }, { count: 10, total: ROWS, next: null }, 'exact at the end')
      const nearEnd = await pageAt(ROWS - 500)
      t.equal(nearEnd.total, ROWS, 'exact once the end is within the bound')
    })
  })
}
