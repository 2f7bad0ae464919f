import t from 'tap'
import {
  LIST_COUNT_LOOKAHEAD, likePattern, listStatements, pageEnvelope, parseListQuery, parseProjection, project, readPage, totalFromPage,
  type ListQueryString, type ListSpec
} from '../../../lib/lists/list-query.js'

const SPEC: ListSpec = {
  idField: '_id',
  fields: ['_id', 'name', 'description', 'version'],
  sortable: { name: 'name', _id: 'id' },
  defaultSort: 'name',
  filterable: { name: 'name', description: 'description' },
  defaultFilterField: 'name',
  maxLimit: 100,
  maxValueLength: 255
}

const LIMITS = { LIST_MAX_PAGE_BYTES: 8 * 1024 * 1024 }
const query = (q: Partial<ListQueryString> = {}): ListQueryString => ({ limit: 25, skip: 0, sort: 'name', order: 1, ...q })

t.test('a query string becomes a request: defaults, order, filters on their fields', async (t) => {
  const plain = parseListQuery(SPEC, query(), LIMITS)
  t.same(plain, { ok: true, value: { limit: 25, skip: 0, maxBytes: LIMITS.LIST_MAX_PAGE_BYTES, sort: 'name', order: 1, filters: [], projection: { kind: 'all' } } })
  const full = parseListQuery(SPEC, query({ order: -1, sort: '_id', equals: 'a', contains: 'b', containsField: 'description', 'starts-with': 'c' }), LIMITS)
  t.ok(full.ok)
  if (!full.ok) return
  t.equal(full.value.order, -1)
  t.same(full.value.filters, [
    { op: 'equals', field: 'name', value: 'a' },
    { op: 'contains', field: 'description', value: 'b' },
    { op: 'startsWith', field: 'name', value: 'c' }
  ])
  const camel = parseListQuery(SPEC, query({ startsWith: 'c', startsWithField: 'description' }), LIMITS)
  t.same(camel.ok && camel.value.filters, [{ op: 'startsWith', field: 'description', value: 'c' }], 'startsWith is the same filter')
})

t.test('unknown fields and contradictions are named', async (t) => {
  const reason = (q: Partial<ListQueryString>): string => {
    const parsed = parseListQuery(SPEC, query(q), LIMITS)
    return parsed.ok ? '' : parsed.reason
  }
  t.match(reason({ limit: Infinity }), /querystring\/limit must be an integer from 1 to 100/)
  t.match(reason({ limit: 101 }), /querystring\/limit/)
  t.match(reason({ skip: -Infinity }), /querystring\/skip must be an integer from 0/)
  t.match(reason({ skip: 1e20 }), /querystring\/skip/)
  t.match(reason({ sort: 'version' }), /querystring\/sort names unknown field "version"; known: name, _id/)
  t.match(reason({ sort: 'constructor' }), /querystring\/sort/, 'no inherited property passes for a field')
  t.match(reason({ equals: 'x', equalsField: 'members' }), /querystring\/equalsField names unknown field "members"/)
  t.match(reason({ containsField: 'name' }), /querystring\/containsField is given without querystring\/contains/)
  t.match(reason({ startsWith: 'a', 'starts-with': 'b' }), /two spellings of one filter/)
  t.equal(reason({ startsWith: 'a', 'starts-with': 'a' }), '', 'both spellings agreeing is one filter')
  t.match(reason({ include: 'name,members,colour' }), /querystring\/include names unknown fields "members", "colour"/)
  t.match(reason({ exclude: 'secret' }), /querystring\/exclude names unknown field "secret"/)
  t.match(reason({ include: 'name', exclude: 'version' }), /querystring\/exclude may only name "_id" together with include/)
})

t.test('projections: the id comes along with include unless excluded', async (t) => {
  const doc = { _id: 'a1', name: 'Core', description: 'd', version: 3 }
  const of = (include?: string, exclude?: string) => {
    const projection = parseProjection(SPEC, { include, exclude })
    if (!projection.ok) throw new Error(projection.reason)
    return project(doc, projection.value)
  }
  t.same(of(), doc)
  t.same(of('name'), { _id: 'a1', name: 'Core' })
  t.same(of('name, version ,'), { _id: 'a1', name: 'Core', version: 3 }, 'spaces and empty entries are ignored')
  t.same(of('name', '_id'), { name: 'Core' })
  t.same(of(undefined, 'description,version'), { _id: 'a1', name: 'Core' })
  t.same(of(undefined, '_id'), { name: 'Core', description: 'd', version: 3 })
  t.same(of(''), doc, 'an empty include keeps everything')
})

t.test('the envelope names the neighbouring pages', async (t) => {
  t.same(pageEnvelope(['a', 'b'], { skip: 0, limit: 2 }, 5), { items: ['a', 'b'], count: 2, skip: 0, end: 2, limit: 2, total: 5, next: 2, previous: null })
  t.same(pageEnvelope(['e'], { skip: 4, limit: 2 }, 5), { items: ['e'], count: 1, skip: 4, end: 5, limit: 2, total: 5, next: null, previous: 2 })
  t.same(pageEnvelope([], { skip: 1, limit: 25 }, 0), { items: [], count: 0, skip: 1, end: 1, limit: 25, total: 0, next: null, previous: 0 })
  t.same(pageEnvelope(['c', 'd'], { skip: 2, limit: 2 }, 4), { items: ['c', 'd'], count: 2, skip: 2, end: 4, limit: 2, total: 4, next: null, previous: 0 })
  t.same(pageEnvelope(['a'], { skip: 10, limit: 25 }, 40), { items: ['a'], count: 1, skip: 10, end: 11, limit: 25, total: 40, next: 11, previous: 0 },
    'a page the byte bound cut: next right after its last item')
  t.equal(pageEnvelope([], { skip: 3, limit: 25 }, 40).next, null, 'an empty page never points at itself')
})

t.test('a short page tells the total itself; a full or empty one past the start does not', async (t) => {
  t.equal(totalFromPage({ skip: 0, limit: 25 }, 11), 11)
  t.equal(totalFromPage({ skip: 0, limit: 25 }, 0), 0)
  t.equal(totalFromPage({ skip: 50, limit: 25 }, 3), 53)
  t.equal(totalFromPage({ skip: 0, limit: 25 }, 25), undefined)
  t.equal(totalFromPage({ skip: 50, limit: 25 }, 0), undefined)
})

t.test('LIKE patterns take the value literally', async (t) => {
  t.equal(likePattern('core', true, true), '%core%')
  t.equal(likePattern('50%_off', true, true), '%50\\%\\_off%')
  t.equal(likePattern('a\\b', false, true), 'a\\\\b%')
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
  const parsed = parseListQuery(SPEC, query({ skip: 50, limit: 10, order: -1, contains: "x'; DROP TABLE t; --" }), LIMITS)
  if (!parsed.ok) throw new Error(parsed.reason)
  const one = listStatements(SPEC, parsed.value, { table: 't', columns: 'id, name', arms: [[]], params: [] })
  const onePage = "SELECT id, name FROM t WHERE (name COLLATE \"default\") ILIKE $1 ESCAPE '\\' ORDER BY name DESC LIMIT $2 OFFSET $3"
  t.equal(one.page.text.replace(/\s+/g, ' '), cut(onePage, 'name DESC', '$4', ''))
  t.same(one.page.params, ["%x'; DROP TABLE t; --%", 10, 50, LIMITS.LIST_MAX_PAGE_BYTES])
  t.equal(one.count.text, "SELECT ((SELECT count(*) FROM (SELECT 1 FROM t WHERE (name COLLATE \"default\") ILIKE $1 ESCAPE '\\' LIMIT $2) AS counted))::int AS n")
  t.same(one.count.params, ["%x'; DROP TABLE t; --%", 50 + 10 + LIST_COUNT_LOOKAHEAD])
  t.equal(one.carriesTotal, false, 'a search often ends within its page: its count runs only when needed')
  t.notMatch(one.page.text + one.count.text, /OVER|DROP/, 'no window function; the value never in the text')

  const plain = parseListQuery(SPEC, query(), LIMITS)
  if (!plain.ok) throw new Error(plain.reason)
  const two = listStatements(SPEC, plain.value, { table: 't', columns: 'id, name', arms: [['public'], ['groups && $1::text[]']], params: [['g']] })
  const counted = '((SELECT count(*) FROM (SELECT 1 FROM t WHERE public LIMIT $2) AS counted) + ' +
    '(SELECT count(*) FROM (SELECT 1 FROM t WHERE groups && $1::text[] LIMIT $2) AS counted))::int'
  t.equal(two.carriesTotal, true, 'without filters the page carries its count')
  t.equal(two.page.text.replace(/\s+/g, ' '), cut(
    'SELECT * FROM ((SELECT id, name FROM t WHERE public ORDER BY name ASC LIMIT $2) UNION ALL ' +
    '(SELECT id, name FROM t WHERE groups && $1::text[] ORDER BY name ASC LIMIT $2)) AS page ORDER BY name ASC LIMIT $3 OFFSET $4',
    'name ASC', '$6', `, ${counted.replace(/\$2/g, '$5')} AS list_total`))
  t.same(two.page.params, [['g'], 25, 25, 0, 25 + LIST_COUNT_LOOKAHEAD, LIMITS.LIST_MAX_PAGE_BYTES], 'each arm reads at most skip + limit rows')
  t.equal(two.count.text, `SELECT ${counted} AS n`)
  t.same(two.count.params, [['g'], 25 + LIST_COUNT_LOOKAHEAD], 'each statement carries only the parameters it names')
})

t.test('rows of bounded size that cannot reach the byte bound: the page in one pass, nothing measured', async (t) => {
  const bounded = { table: 't', columns: 'id, name', arms: [['id = $1']], pageOnly: ['n BETWEEN $2 AND $3'], params: ['k', 1, 9], maxRowBytes: 1000 }
  const plain = parseListQuery(SPEC, query(), LIMITS)
  if (!plain.ok) throw new Error(plain.reason)
  const counted = '((SELECT count(*) FROM (SELECT 1 FROM t WHERE id = $1 LIMIT $4) AS counted))::int'
  const page = 'SELECT id, name FROM t WHERE id = $1 AND n BETWEEN $2 AND $3 ORDER BY name ASC LIMIT $4 OFFSET $5'
  const whole = listStatements(SPEC, plain.value, bounded)
  t.equal(whole.page.text.replace(/\s+/g, ' '), `SELECT listed.*, ${counted.replace('$4', '$6')} AS list_total FROM (${page}) AS listed`)
  t.same(whole.page.params, ['k', 1, 9, 25, 0, 25 + LIST_COUNT_LOOKAHEAD], 'no byte bound among them')
  t.equal(whole.count.text, `SELECT ${counted.replace('$4', '$2')} AS n`, 'the page-only conditions stay out of the count')
  t.same(whole.count.params, ['k', 25 + LIST_COUNT_LOOKAHEAD])

  // 25 rows of up to 1,000 bytes could pass a bound of 10,000: measured and cut as any page.
  const small = parseListQuery(SPEC, query(), { LIST_MAX_PAGE_BYTES: 10_000 })
  if (!small.ok) throw new Error(small.reason)
  const measured = listStatements(SPEC, small.value, bounded)
  t.equal(measured.page.text.replace(/\s+/g, ' '), cut(page, 'name ASC', '$7', `, ${counted.replace('$4', '$6')} AS list_total`))
  t.same(measured.page.params, ['k', 1, 9, 25, 0, 25 + LIST_COUNT_LOOKAHEAD, 10_000])
  t.match(listStatements(SPEC, plain.value, { ...bounded, maxRowBytes: undefined }).page.text, /^WITH fit AS MATERIALIZED/, 'rows of unknown size are measured')

  const searched = parseListQuery(SPEC, query({ contains: 'x' }), LIMITS)
  if (!searched.ok) throw new Error(searched.reason)
  t.equal(listStatements(SPEC, searched.value, bounded).page.text.replace(/\s+/g, ' '),
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
  t.same(await readPage(db, whole, plain.value), { rows: [{ id: 'a', name: 'x' }, { id: 'b', name: 'y' }], total: 2 })
  t.same(await readPage(db, listStatements(SPEC, searched.value, bounded), searched.value), { rows: [{ id: 'a', name: 'x' }, { id: 'b', name: 'y' }], total: 2 })
  t.equal(calls.length, 2, 'no count statement for short pages')
})

t.test('a page keeps its plan only when its source plans alike for any values and it has no filters', async (t) => {
  const alike = { table: 't', columns: 'id, name', arms: [['id = $1']], params: ['k'], plansAlike: true }
  const plain = parseListQuery(SPEC, query(), LIMITS)
  const searched = parseListQuery(SPEC, query({ contains: 'x' }), LIMITS)
  if (!plain.ok || !searched.ok) throw new Error('parse')
  t.equal(listStatements(SPEC, plain.value, alike).keepsPlan, true)
  t.equal(listStatements(SPEC, searched.value, alike).keepsPlan, false, 'a filter: planned for its values')
  t.equal(listStatements(SPEC, plain.value, { ...alike, plansAlike: undefined }).keepsPlan, false, 'by default planned per call')
  t.equal(listStatements(SPEC, plain.value, alike).count.text, 'SELECT ((SELECT count(*) FROM (SELECT 1 FROM t WHERE id = $1 ORDER BY name ASC LIMIT $2) AS counted))::int AS n',
    'a kept plan counts in index order, whatever key it is used for')
  t.notMatch(listStatements(SPEC, searched.value, alike).count.text, /ORDER BY/)

  const options: unknown[] = []
  const db = {
    async query<R> (_text: string, _params: unknown[], given: { plan?: 'custom' }): Promise<{ rows: R[] }> {
      options.push(given)
      return { rows: [] }
    }
  }
  await readPage(db, listStatements(SPEC, plain.value, alike), plain.value)
  await readPage(db, listStatements(SPEC, searched.value, alike), searched.value)
  t.same(options, [{}, { plan: 'custom' }], 'the kept plan goes as a prepared statement, the other planned per call')
})

t.test('contains with frequent trigrams: the index looks up a part without them, the whole value is tested after', async (t) => {
  const parsed = parseListQuery(SPEC, query({ contains: 'oup 4242' }), LIMITS)
  if (!parsed.ok) throw new Error(parsed.reason)
  const source = { table: 't', columns: 'id, name', arms: [[]], params: [] }
  const { page, count } = listStatements(SPEC, parsed.value, source, { name: new Set(['oup', 'up ']) })
  t.equal(page.text.replace(/\s+/g, ' '), cut("SELECT id, name FROM t WHERE (name COLLATE \"default\") ILIKE $1 ESCAPE '\\' AND " +
    "((name COLLATE \"default\") ILIKE $2 ESCAPE '\\') IS TRUE ORDER BY name ASC LIMIT $3 OFFSET $4", 'name ASC', '$5', ''))
  t.same(page.params, ['% 4242%', '%oup 4242%', 25, 0, LIMITS.LIST_MAX_PAGE_BYTES])
  t.match(count.text, /ILIKE \$1 ESCAPE '\\' AND \(\(name COLLATE "default"\) ILIKE \$2 ESCAPE '\\'\) IS TRUE LIMIT \$3/)

  const other = listStatements(SPEC, parsed.value, source, { description: new Set(['oup', 'up ']) })
  t.same(other.page.params, ['%oup 4242%', 25, 0, LIMITS.LIST_MAX_PAGE_BYTES], 'trigrams of another field change nothing')
  const rare = listStatements(SPEC, parsed.value, source, { name: new Set(['gro']) })
  t.same(rare.page.params, ['%oup 4242%', 25, 0, LIMITS.LIST_MAX_PAGE_BYTES], 'a value without frequent trigrams is looked up whole')
})

t.test('the bracket forms: equals[field], contains[field], starts-with[field], in[field], not-in[field]', async (t) => {
  const brackets = (extra: Record<string, unknown>) => parseListQuery(SPEC, { ...query(), ...extra } as ListQueryString, LIMITS)
  const parsed = brackets({
    'equals[name]': 'a', 'contains[description]': 'b', 'starts-with[name]': 'c', 'startsWith[description]': 'd', 'in[name]': ['x', 'y'], 'not-in[description]': 'z'
  })
  t.same(parsed, {
    ok: true,
    value: {
      limit: 25,
      skip: 0,
      maxBytes: LIMITS.LIST_MAX_PAGE_BYTES,
      sort: 'name',
      order: 1,
      filters: [
        { op: 'equals', field: 'name', value: 'a' },
        { op: 'contains', field: 'description', value: 'b' },
        { op: 'startsWith', field: 'name', value: 'c' },
        { op: 'startsWith', field: 'description', value: 'd' },
        { op: 'in', field: 'name', values: ['x', 'y'] },
        { op: 'notIn', field: 'description', values: ['z'] }
      ],
      projection: { kind: 'all' }
    }
  }, 'each bracket is a filter on its field; one value of in/not-in is a list of one')
  t.same(brackets({ equals: 'a', 'equals[description]': 'b' }).ok && (brackets({ equals: 'a', 'equals[description]': 'b' }) as { value: { filters: unknown[] } }).value.filters, [
    { op: 'equals', field: 'name', value: 'a' },
    { op: 'equals', field: 'description', value: 'b' }
  ], 'beside the flat form, both apply')
  t.same(brackets({ 'equals[version]': '1' }), { ok: false, reason: 'querystring/equals[version] names unknown field "version"; known: name, description' })
  t.same(brackets({ 'not-in[]': ['1'] }), { ok: false, reason: 'querystring/not-in[] names no field; known: name, description' })
  t.same(brackets({ 'other[name]': 'x' }).ok, true, 'keys of no bracket form are left to the schema')
})

t.test('in and not-in as SQL: the values as one array parameter', async (t) => {
  const request = parseListQuery(SPEC, { ...query(), 'in[name]': ['a', 'b'], 'not-in[description]': ['c'] } as ListQueryString, LIMITS)
  if (!request.ok) throw new Error(request.reason)
  const { page } = listStatements(SPEC, request.value, { table: 'groups', columns: '*', arms: [], params: [] })
  t.match(page.text, /name = ANY\(\$\d+::text\[\]\) AND description <> ALL\(\$\d+::text\[\]\)/)
  t.ok(page.params.some((p) => Array.isArray(p) && p.join() === 'a,b'))
  t.ok(page.params.some((p) => Array.isArray(p) && p.join() === 'c'))
})
