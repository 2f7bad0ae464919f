import t from 'tap'
import { parseListQuery, type ListQueryString, type ListSpec } from '../../../lib/lists/grammar.js'
import { LIMITS, SPEC, query } from './fixtures.js'

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

t.test('a list that only pages (a history): its own sort and order, no filters', async (t) => {
  const HISTORY: ListSpec = { ...SPEC, sortable: ['version'], defaultSort: 'version', defaultOrder: -1, filterable: [], defaultFilterField: '' }
  t.same(parseListQuery(HISTORY, { limit: 10, skip: 5, include: 'name' }, LIMITS), {
    ok: true,
    value: { limit: 10, skip: 5, maxBytes: LIMITS.LIST_MAX_PAGE_BYTES, sort: 'version', order: -1, filters: [], projection: { kind: 'include', fields: new Set(['name', '_id']) } }
  })
  t.same(parseListQuery(HISTORY, { limit: 10, skip: 0, exclude: 'colour' }, LIMITS), { ok: false, reason: 'querystring/exclude names unknown field "colour"; known: _id, name, description, version' })
  t.same(parseListQuery(HISTORY, { limit: Infinity, skip: 0 }, LIMITS), { ok: false, reason: 'querystring/limit must be an integer from 1 to 100' })
  t.equal(parseListQuery(SPEC, { limit: 1, skip: 0 }, LIMITS).ok && (parseListQuery(SPEC, { limit: 1, skip: 0 }, LIMITS) as { value: { order: number } }).value.order, 1,
    'ascending unless the list says otherwise')
})
