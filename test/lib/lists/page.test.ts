import t from 'tap'
import { listPage, pageEnvelope } from '../../../lib/lists/page.js'
import type { ListRequest, ListSpec } from '../../../lib/lists/grammar.js'

t.test('the envelope names the neighbouring pages', async (t) => {
  t.same(pageEnvelope(['a', 'b'], { skip: 0, limit: 2 }, 5), { items: ['a', 'b'], count: 2, skip: 0, end: 2, limit: 2, total: 5, next: 2, previous: null })
  t.same(pageEnvelope(['e'], { skip: 4, limit: 2 }, 5), { items: ['e'], count: 1, skip: 4, end: 5, limit: 2, total: 5, next: null, previous: 2 })
  t.same(pageEnvelope([], { skip: 1, limit: 25 }, 0), { items: [], count: 0, skip: 1, end: 1, limit: 25, total: 0, next: null, previous: 0 })
  t.same(pageEnvelope(['c', 'd'], { skip: 2, limit: 2 }, 4), { items: ['c', 'd'], count: 2, skip: 2, end: 4, limit: 2, total: 4, next: null, previous: 0 })
  t.same(pageEnvelope(['a'], { skip: 10, limit: 25 }, 40), { items: ['a'], count: 1, skip: 10, end: 11, limit: 25, total: 40, next: 11, previous: 0 },
    'a page the byte bound cut: next right after its last item')
  t.equal(pageEnvelope([], { skip: 3, limit: 25 }, 40).next, null, 'an empty page never points at itself')
})

const SPEC: ListSpec = {
  idField: 'id',
  fields: ['id', 'name', 'secret'],
  sortable: ['id'],
  defaultSort: 'id',
  filterable: ['name'],
  defaultFilterField: 'name',
  maxLimit: 100,
  maxValueLength: 64
}
const LIMITS = { LIST_MAX_PAGE_BYTES: 1024 }

t.test('a list route\'s page: the request read, the items projected, the envelope around them', async (t) => {
  const asked: ListRequest[] = []
  const page = await listPage(SPEC, { limit: 2, skip: 4, sort: 'id', order: -1, equals: 'b', exclude: 'secret' }, LIMITS, async (request) => {
    asked.push(request)
    return { items: [{ id: 'x', name: 'b', secret: 's' }], total: 5 }
  })
  t.same(asked, [{ limit: 2, skip: 4, maxBytes: 1024, sort: 'id', order: -1, filters: [{ op: 'equals', field: 'name', value: 'b' }], projection: { kind: 'exclude', fields: new Set(['secret']) } }])
  t.same(page, { items: [{ id: 'x', name: 'b' }], count: 1, skip: 4, end: 5, limit: 2, total: 5, next: null, previous: 2 })
})

t.test('a query string the language refuses is a 400 naming the parameter, and nothing is read', async (t) => {
  let reads = 0
  const read = async () => { reads++; return { items: [], total: 0 } }
  await t.rejects(listPage(SPEC, { limit: 2, skip: 0, sort: 'name' }, LIMITS, read),
    { statusCode: 400, code: 'INVALID_LIST_PARAMETER', message: 'querystring/sort names unknown field "name"; known: id' })
  await t.rejects(listPage(SPEC, { limit: 2, skip: 0, include: 'colour' }, LIMITS, read), { statusCode: 400, code: 'INVALID_LIST_PARAMETER' })
  t.equal(reads, 0)
})
