import t from 'tap'
import { parseListQuery, type ListQueryString } from '../../../lib/lists/grammar.js'
import { LIMITS, SPEC, query } from './fixtures.js'
import { sql } from '../../../lib/lists/sql.js'
import { LIST_COUNT_LOOKAHEAD, listColumns, listStatements, readPage, totalFromPage, type ListSource } from '../../../lib/lists/statements.js'

const COLUMNS = { sortable: { name: 'name', _id: 'id' }, filterable: { name: 'name', description: 'description' } }
const source = (given: Omit<ListSource, 'sortable' | 'filterable'>): ListSource => ({ ...COLUMNS, ...given })

const request = (q: Partial<ListQueryString> = {}, limits = LIMITS) => {
  const parsed = parseListQuery(SPEC, query(q), limits)
  if (!parsed.ok) throw new Error(parsed.reason)
  return parsed.value
}

t.test('a short page tells the total itself; a full or empty one past the start does not', async (t) => {
  t.equal(totalFromPage({ skip: 0, limit: 25 }, 11), 11)
  t.equal(totalFromPage({ skip: 0, limit: 25 }, 0), 0)
  t.equal(totalFromPage({ skip: 50, limit: 25 }, 3), 53)
  t.equal(totalFromPage({ skip: 0, limit: 25 }, 25), undefined)
  t.equal(totalFromPage({ skip: 50, limit: 25 }, 0), undefined)
})

// A page statement: `page` (the rows in index order, at most limit of them) read twice in one
// statement, first (once, as a CTE) for the sizes of its rows and how many fit `bytes`, then for
// that many rows.
const cut = (page: string, orderBy: string, bytes: string, carried: string): string => {
  const key = orderBy.split(' ')[0] as string
  return 'WITH fit AS MATERIALIZED (SELECT s.list_rows, ' +
    `CASE WHEN s.bytes <= ${bytes}::bigint THEN s.list_rows ELSE (SELECT count(*) FROM generate_subscripts(s.sizes, 1) AS i ` +
    `WHERE i = 1 OR (SELECT sum(b) FROM unnest(s.sizes[1:i]) AS u(b)) <= ${bytes}::bigint) END AS kept ` +
    `FROM (SELECT count(*)::int AS list_rows, sum(list_bytes) AS bytes, array_agg(list_bytes ORDER BY ${orderBy}) AS sizes ` +
    `FROM (SELECT ${key}, octet_length(row_to_json(paged)::text) AS list_bytes FROM (${page}) AS paged) AS measured) AS s) ` +
    `SELECT listed.*, (SELECT list_rows FROM fit) AS list_rows${carried} FROM (${page}) AS listed ` +
    `ORDER BY ${orderBy} LIMIT (SELECT kept FROM fit)`
}

t.test('the SQL: the page in index order without a window function, the count bounded, values as parameters', async (t) => {
  const one = listStatements(request({ skip: 50, limit: 10, order: -1, contains: "x'; DROP TABLE t; --" }), source({ table: 't', columns: 'id, name', arms: [[]] }))
  const onePage = "SELECT id, name FROM t WHERE (name COLLATE \"default\") ILIKE $2 ESCAPE '\\' ORDER BY name DESC LIMIT $3 OFFSET $4"
  t.equal(one.page.text.replace(/\s+/g, ' '), cut(onePage, 'name DESC', '$1', ''))
  t.same(one.page.params, [LIMITS.LIST_MAX_PAGE_BYTES, "%x'; DROP TABLE t; --%", 10, 50])
  t.equal(one.count.text, "SELECT ((SELECT count(*) FROM (SELECT 1 FROM t WHERE (name COLLATE \"default\") ILIKE $1 ESCAPE '\\' LIMIT $2) AS counted))::int AS n")
  t.same(one.count.params, ["%x'; DROP TABLE t; --%", 50 + 10 + LIST_COUNT_LOOKAHEAD])
  t.equal(one.carriesTotal, false, 'a search often ends within its page: its count runs only when needed')
  t.notMatch(one.page.text + one.count.text, /OVER|DROP/, 'no window function; the value never in the text')

  const two = listStatements(request(), source({ table: 't', columns: 'id, name', arms: [[sql`public`], [sql`groups && ${['g']}::text[]`]] }))
  const counted = (groups: string, bound: string): string => `((SELECT count(*) FROM (SELECT 1 FROM t WHERE public LIMIT ${bound}) AS counted) + ` +
    `(SELECT count(*) FROM (SELECT 1 FROM t WHERE groups && ${groups}::text[] LIMIT ${bound}) AS counted))::int`
  t.equal(two.carriesTotal, true, 'without filters the page carries its count')
  t.equal(two.page.text.replace(/\s+/g, ' '), cut(
    'SELECT * FROM ((SELECT id, name FROM t WHERE public ORDER BY name ASC LIMIT $2) UNION ALL ' +
    '(SELECT id, name FROM t WHERE groups && $3::text[] ORDER BY name ASC LIMIT $2)) AS page ORDER BY name ASC LIMIT $4 OFFSET $5',
    'name ASC', '$1', `, ${counted('$3', '$6')} AS list_total`))
  t.same(two.page.params, [LIMITS.LIST_MAX_PAGE_BYTES, 25, ['g'], 25, 0, 25 + LIST_COUNT_LOOKAHEAD], 'each arm reads at most skip + limit rows')
  t.equal(two.count.text, `SELECT ${counted('$2', '$1')} AS n`)
  t.same(two.count.params, [25 + LIST_COUNT_LOOKAHEAD, ['g']], 'each statement carries only the parameters it names')
})

t.test('rows of bounded size that cannot reach the byte bound: the page in one pass, nothing measured', async (t) => {
  const bounded = source({ table: 't', columns: 'id, name', arms: [[sql`id = ${'k'}`]], pageOnly: [sql`n BETWEEN ${1} AND ${9}`], maxRowBytes: 1000 })
  const plain = request()
  const counted = (bound: string): string => `((SELECT count(*) FROM (SELECT 1 FROM t WHERE id = $1 LIMIT ${bound}) AS counted))::int`
  const page = (key: string, from: string, to: string, limit: string, skip: string): string =>
    `SELECT id, name FROM t WHERE id = ${key} AND n BETWEEN ${from} AND ${to} ORDER BY name ASC LIMIT ${limit} OFFSET ${skip}`
  const whole = listStatements(plain, bounded)
  t.equal(whole.page.text.replace(/\s+/g, ' '), `SELECT listed.*, ${counted('$2')} AS list_total FROM (${page('$1', '$3', '$4', '$5', '$6')}) AS listed`)
  t.same(whole.page.params, ['k', 25 + LIST_COUNT_LOOKAHEAD, 1, 9, 25, 0], 'no byte bound among them')
  t.equal(whole.count.text, `SELECT ${counted('$2')} AS n`, 'the page-only conditions stay out of the count')
  t.same(whole.count.params, ['k', 25 + LIST_COUNT_LOOKAHEAD])

  // 25 rows of up to 1,000 bytes could pass a bound of 10,000: measured and cut as any page.
  const measured = listStatements(request({}, { LIST_MAX_PAGE_BYTES: 10_000 }), bounded)
  const measuredPage = 'SELECT id, name FROM t WHERE id = $2 AND n BETWEEN $3 AND $4 ORDER BY name ASC LIMIT $5 OFFSET $6'
  t.equal(measured.page.text.replace(/\s+/g, ' '), cut(measuredPage, 'name ASC', '$1', `, ${counted('$7').replace('$1', '$2')} AS list_total`))
  t.same(measured.page.params, [10_000, 'k', 1, 9, 25, 0, 25 + LIST_COUNT_LOOKAHEAD])
  t.match(listStatements(plain, { ...bounded, maxRowBytes: undefined }).page.text, /^WITH fit AS MATERIALIZED/, 'rows of unknown size are measured')

  const searched = request({ contains: 'x' })
  t.equal(listStatements(searched, bounded).page.text.replace(/\s+/g, ' '),
    "SELECT id, name FROM t WHERE id = $1 AND n BETWEEN $2 AND $3 AND (name COLLATE \"default\") ILIKE $4 ESCAPE '\\' ORDER BY name ASC LIMIT $5 OFFSET $6",
    'a search carries no count: the page alone')

  // Read back: the rows it returns are all the page had, so a short one tells its total.
  const calls: string[] = []
  const db = {
    async query<R> (text: string): Promise<{ rows: R[] }> {
      calls.push(text)
      return { rows: [{ id: 'a', name: 'x', list_total: 2 }, { id: 'b', name: 'y', list_total: 2 }] as R[] }
    }
  }
  t.same(await readPage(db, whole, plain), { rows: [{ id: 'a', name: 'x' }, { id: 'b', name: 'y' }], total: 2 })
  t.same(await readPage(db, listStatements(searched, bounded), searched), { rows: [{ id: 'a', name: 'x' }, { id: 'b', name: 'y' }], total: 2 })
  t.equal(calls.length, 2, 'no count statement for short pages')
})

t.test('a full page tells no total: the count it carries, else the count statement', async (t) => {
  const full = request({ limit: 2 })
  const rows = [{ id: 'a', list_rows: 2, list_total: 7 }, { id: 'b', list_rows: 2, list_total: 7 }]
  const texts: string[] = []
  const db = {
    async query<R> (text: string): Promise<{ rows: R[] }> {
      texts.push(text)
      return { rows: (text.startsWith('SELECT ((') ? [{ n: 9 }] : rows.map(({ list_total: _, ...row }) => row)) as R[] }
    }
  }
  const carried = { async query<R> (): Promise<{ rows: R[] }> { return { rows: rows as R[] } } }
  const statements = listStatements(full, source({ table: 't', columns: 'id', arms: [] }))
  t.same(await readPage(carried, statements, full), { rows: [{ id: 'a' }, { id: 'b' }], total: 7 }, 'the count the page carries')
  t.same(await readPage(db, statements, full), { rows: [{ id: 'a' }, { id: 'b' }], total: 9 }, 'else the count statement')
  t.equal(texts[1], statements.count.text)
})

t.test('a page keeps its plan only when its source plans alike for any values and it has no filters', async (t) => {
  const alike = source({ table: 't', columns: 'id, name', arms: [[sql`id = ${'k'}`]], plansAlike: true })
  const plain = request()
  const searched = request({ contains: 'x' })
  t.equal(listStatements(plain, alike).keepsPlan, true)
  t.equal(listStatements(searched, alike).keepsPlan, false, 'a filter: planned for its values')
  t.equal(listStatements(plain, { ...alike, plansAlike: undefined }).keepsPlan, false, 'by default planned per call')
  t.equal(listStatements(plain, alike).count.text, 'SELECT ((SELECT count(*) FROM (SELECT 1 FROM t WHERE id = $1 ORDER BY name ASC LIMIT $2) AS counted))::int AS n',
    'a kept plan counts in index order, whatever key it is used for')
  t.notMatch(listStatements(searched, alike).count.text, /ORDER BY/)

  const options: unknown[] = []
  const db = {
    async query<R> (_text: string, _params: unknown[], given: { plan?: 'custom' }): Promise<{ rows: R[] }> {
      options.push(given)
      return { rows: [] }
    }
  }
  await readPage(db, listStatements(plain, alike), plain)
  await readPage(db, listStatements(searched, alike), searched)
  t.same(options, [{}, { plan: 'custom' }], 'the kept plan goes as a prepared statement, the other planned per call')
})

t.test('contains with frequent trigrams: the index looks up a part without them, the whole value is tested after', async (t) => {
  const parsed = request({ contains: 'oup 4242' })
  const plain = source({ table: 't', columns: 'id, name', arms: [[]] })
  const { page, count } = listStatements(parsed, plain, { name: new Set(['oup', 'up ']) })
  t.equal(page.text.replace(/\s+/g, ' '), cut("SELECT id, name FROM t WHERE (name COLLATE \"default\") ILIKE $2 ESCAPE '\\' AND " +
    "((name COLLATE \"default\") ILIKE $3 ESCAPE '\\') IS TRUE ORDER BY name ASC LIMIT $4 OFFSET $5", 'name ASC', '$1', ''))
  t.same(page.params, [LIMITS.LIST_MAX_PAGE_BYTES, '% 4242%', '%oup 4242%', 25, 0])
  t.match(count.text, /ILIKE \$1 ESCAPE '\\' AND \(\(name COLLATE "default"\) ILIKE \$2 ESCAPE '\\'\) IS TRUE LIMIT \$3/)

  const other = listStatements(parsed, plain, { description: new Set(['oup', 'up ']) })
  t.same(other.page.params, [LIMITS.LIST_MAX_PAGE_BYTES, '%oup 4242%', 25, 0], 'trigrams of another field change nothing')
  const rare = listStatements(parsed, plain, { name: new Set(['gro']) })
  t.same(rare.page.params, [LIMITS.LIST_MAX_PAGE_BYTES, '%oup 4242%', 25, 0], 'a value without frequent trigrams is looked up whole')
})

t.test('each filter on its field\'s column; in and not-in with the values as one array parameter', async (t) => {
  const parsed = parseListQuery(SPEC, { ...query({ equals: 'e', startsWith: 's', startsWithField: 'description' }), 'in[name]': ['a', 'b'], 'not-in[description]': ['c'] } as ListQueryString, LIMITS)
  if (!parsed.ok) throw new Error(parsed.reason)
  const { count } = listStatements(parsed.value, source({ table: 'groups', columns: '*', arms: [] }))
  t.equal(count.text, 'SELECT ((SELECT count(*) FROM (SELECT 1 FROM groups WHERE name = $1 AND (description COLLATE "default") ILIKE $2 ESCAPE \'\\\' ' +
    'AND name = ANY($3::text[]) AND description <> ALL($4::text[]) LIMIT $5) AS counted))::int AS n')
  t.same(count.params, ['e', 's%', ['a', 'b'], ['c'], 25 + LIST_COUNT_LOOKAHEAD])
})

t.test('a repository\'s columns cover every sortable and filterable field of its list', async (t) => {
  const fields = { sortable: ['name', '_id'], filterable: ['name', 'description'] } as const
  t.same(listColumns(fields, COLUMNS), COLUMNS)
  // @ts-expect-error the types refuse a list without the column of a field
  t.throws(() => listColumns(fields, { sortable: { name: 'name' }, filterable: COLUMNS.filterable }), /no column for its sortable field\(s\) _id/)
  // @ts-expect-error as they do a column that is not text
  t.throws(() => listColumns(fields, { sortable: COLUMNS.sortable, filterable: { name: 'name', description: 1 } }), /filterable field\(s\) description/)
  t.throws(() => listColumns({ sortable: ['constructor'], filterable: [] }, { sortable: {} as { constructor: string }, filterable: {} }), /sortable field\(s\) constructor/,
    'no inherited property passes for a column')
})
