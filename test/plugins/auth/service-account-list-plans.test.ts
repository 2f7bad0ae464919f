// On the PostgreSQL server with enough service accounts for the planner to care: a page of
// GET /oauth/serviceAccounts reads its rows through an index in client_id order (no sequential scan and
// sort of every account, no window function) and the count is bounded. A change that brings back
// reading the whole table per request, or loses the index, fails here.
import t from 'tap'
import pg from 'pg'
import { buildTestApp, createTestDatabase, testDatabases } from '../../helper.js'
import { SERVICE_ACCOUNT_LIST } from '../../../schemas/auth.js'
import { SERVICE_ACCOUNT_SOURCE } from '../../../plugins/auth/sessions-repository.js'
import { parseListQuery, type ListQueryString } from '../../../lib/lists/grammar.js'
import { LIST_COUNT_LOOKAHEAD, listStatements } from '../../../lib/lists/statements.js'
import { pageEnvelope } from '../../../lib/lists/page.js'
import { explain, indexes, nodes, pageAndCarried, types } from '../../helpers/plans.js'

const ROWS = 20_000
const NAMES = 2_000 // 10 accounts a name

if (testDatabases.includes('postgres')) {
  t.test('the service account list uses its indexes at scale', async (t) => {
    const database = await createTestDatabase(t, 'postgres')
    const app = await buildTestApp(t, { database }) // runs the migrations
    const client = new pg.Client({ connectionString: database.env.DATABASE_URL })
    await client.connect()
    t.teardown(async () => { await client.end() })
    await client.query(`INSERT INTO oauth_clients (client_id, secret_digest, name, created_by, updated_by)
      SELECT lpad(to_hex(g), 24, '0'), repeat('0', 64), 'bot-' || (g % ${NAMES} + 1), 'admin', 'admin'
      FROM generate_series(1, ${ROWS}) AS g`)
    await client.query('VACUUM ANALYZE oauth_clients')

    const parse = (q: Partial<ListQueryString>) => {
      const parsed = parseListQuery(SERVICE_ACCOUNT_LIST, { limit: 25, skip: 0, sort: 'client_id', order: 1, ...q }, app.config)
      if (!parsed.ok) throw new Error(parsed.reason)
      return parsed.value
    }

    const cases: Array<[string, Partial<ListQueryString>, string]> = [
      ['first page', {}, 'oauth_clients_pkey'],
      ['a deep page', { skip: 15_000 }, 'oauth_clients_pkey'],
      ['descending', { order: -1 }, 'oauth_clients_pkey'],
      ['the accounts of one name', { equals: 'bot-77' }, 'oauth_clients_name'],
      ['one client by id', { equals: '000000000000000000000abc', equalsField: 'client_id' }, 'oauth_clients_pkey']
    ]
    for (const [name, q, index] of cases) {
      const { page, carriesTotal, count } = listStatements(parse(q), SERVICE_ACCOUNT_SOURCE)
      const { page: pagePlan, carried } = pageAndCarried(await explain(client, page.text, page.params))
      const countPlan = nodes(await explain(client, count.text, count.params))
      t.notOk(types(pagePlan).includes('Seq Scan'), `${name}: the page reads no table from end to end (${types(pagePlan).join(', ')})`)
      t.notOk(types(pagePlan).includes('WindowAgg'), `${name}: no window function`)
      t.ok(indexes(pagePlan).includes(index), `${name}: the page uses ${index} (${indexes(pagePlan).join(', ')})`)
      t.ok(types(countPlan).includes('Limit'), `${name}: the count is bounded`)
      t.equal(carried.length > 0, carriesTotal, `${name}: the page carries its count exactly when it says so`)
      if (carriesTotal) t.ok(types(carried).includes('Limit'), `${name}: the carried count is bounded`)
    }

    t.test('through the repository: pages in client_id order, a total bounded past the page and exact at the end', async (t) => {
      const pageAt = async (q: Partial<ListQueryString>) => {
        const request = parse(q)
        const { items, total } = await app.sessionsRepository.listServiceAccounts(request)
        return pageEnvelope(items, request, total)
      }
      const first = await pageAt({})
      t.same(first.items.map((c) => c.client_id), Array.from({ length: 25 }, (_, i) => (i + 1).toString(16).padStart(24, '0')))
      t.equal(first.total, 25 + LIST_COUNT_LOOKAHEAD, 'a lower bound')
      t.equal(first.next, 25)
      const last = await pageAt({ skip: ROWS - 10 })
      t.same({ count: last.count, total: last.total, next: last.next }, { count: 10, total: ROWS, next: null }, 'exact at the end')
      const named = await pageAt({ equals: 'bot-77', limit: 100 })
      t.equal(named.total, ROWS / NAMES)
      t.ok(named.items.every((c) => c.name === 'bot-77'))
    })
  })
}
