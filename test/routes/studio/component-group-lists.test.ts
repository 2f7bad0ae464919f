// The platform's list language on component groups, users and adapters, on both databases:
// every parameter and their combinations, projections, filters under GBAC, hostile values.
import t from 'tap'
import fc from 'fast-check'
import { adminAuth, buildTestApp, createUser, testDatabases } from '../../helper.js'

const BASE = '/studio/component-groups'

type Doc = Record<string, unknown> & { _id: string, name: string }
interface Page { items: Doc[], count: number, skip: number, end: number, limit: number, total: number, next: number | null, previous: number | null }

// Names that sort differently by byte and by dictionary, and share parts for the filters.
const PUBLIC = ['alpha core', 'Beta edge', 'core Gamma', 'delta_core', 'Épsilon core', 'zeta']
const NETOPS = ['Core netops', 'edge netops', 'netops 100%']
const OTHER = ['Core other', 'secret other']

for (const database of testDatabases) {
  t.test(`component group lists on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database })
    const rita = await createUser(app, { username: 'rita', groups: ['netops'] })
    const nobody = await createUser(app, { username: 'nobody' })
    const ids = new Map<string, string>()
    const create = async (name: string, gbacRead: string[]): Promise<void> => {
      const response = await app.inject({ method: 'POST', url: BASE, headers: { authorization: adminAuth }, payload: { componentGroup: { name, gbacRead, members: [], meta: { n: name.length } } } })
      if (response.statusCode !== 200) throw new Error(response.body)
      ids.set(name, response.json().created._id)
    }
    for (const name of PUBLIC) await create(name, [])
    for (const name of NETOPS) await create(name, ['netops'])
    for (const name of OTHER) await create(name, ['other'])
    const list = async (query: string, auth = adminAuth) => await app.inject({ url: `${BASE}?${query}`, headers: { authorization: auth } })
    const page = async (query: string, auth = adminAuth): Promise<Page> => {
      const response = await list(query, auth)
      if (response.statusCode !== 200) throw new Error(`${query}: ${response.statusCode} ${response.body}`)
      return response.json()
    }
    const names = (p: Page) => p.items.map((d) => d.name)
    const byteOrder = (values: string[]) => [...values].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    const everything = byteOrder([...PUBLIC, ...NETOPS, ...OTHER])
    const ritaSees = byteOrder([...PUBLIC, ...NETOPS])

    t.test('order: by name in byte order (as the platform) or by _id, ascending or descending', async (t) => {
      t.same(names(await page('limit=100')), everything)
      t.same(names(await page('limit=100&order=-1')), [...everything].reverse())
      t.same(names(await page('limit=100&sort=name&order=1')), everything)
      const idsInOrder = [...ids.values()].sort()
      t.same((await page('limit=100&sort=_id')).items.map((d) => d._id), idsInOrder)
      t.same((await page('limit=100&sort=_id&order=-1')).items.map((d) => d._id), [...idsInOrder].reverse())
    })

    t.test('pages: every skip and limit cut the same order, and the envelope links them', async (t) => {
      for (const limit of [1, 2, 3, 5, 11, 12]) {
        const seen: string[] = []
        let skip: number | null = 0
        let pages = 0
        while (skip !== null) {
          const p = await page(`limit=${limit}&skip=${skip}`)
          t.equal(p.total, everything.length)
          t.equal(p.count, p.items.length)
          t.same({ skip: p.skip, limit: p.limit }, { skip, limit })
          t.equal(p.previous, skip === 0 ? null : Math.max(0, skip - limit))
          seen.push(...names(p))
          skip = p.next
          pages++
        }
        t.same(seen, everything, `limit ${limit}: following next reads every item once`)
        t.equal(pages, Math.ceil(everything.length / limit))
      }
      const past = await page('skip=1000')
      t.same(past, { items: [], count: 0, skip: 1000, end: 1000, limit: 25, total: everything.length, next: null, previous: 975 })
      t.equal((await page('')).limit, 25, 'limit defaults to 25')
    })

    t.test('filters: equals exact, contains and starts-with ignoring case, values literal, on the field named', async (t) => {
      t.same(names(await page('equals=zeta')), ['zeta'])
      t.same(names(await page('equals=ZETA')), [], 'equals is exact')
      t.same(names(await page('equals=zeta&equalsField=name')), ['zeta'])
      t.same(names(await page('contains=CORE&limit=100')), byteOrder(everything.filter((n) => n.toLowerCase().includes('core'))))
      t.same(names(await page('contains=%C3%A9psilon')), ['Épsilon core'], 'case folding beyond ASCII')
      t.same(names(await page('contains=_')), ['delta_core'], '_ is literal')
      t.same(names(await page('contains=%25')), ['netops 100%'], '% is literal')
      t.same(names(await page('starts-with=core')), byteOrder(['core Gamma', 'Core netops', 'Core other']))
      t.same(names(await page('startsWith=core&startsWithField=name')), byteOrder(['core Gamma', 'Core netops', 'Core other']), 'both spellings')
      t.same(names(await page('starts-with=%25')), [], 'starts-with takes % literally')
      const combined = await page('contains=core&starts-with=c&order=-1&limit=2')
      t.same(names(combined), byteOrder(['core Gamma', 'Core netops', 'Core other']).reverse().slice(0, 2))
      t.equal(combined.total, 3)
      t.equal(combined.next, 2)
      t.same(names(await page('equals=zeta&contains=core')), [], 'filters all apply')
    })

    t.test('GBAC: a reader lists and counts the public groups and its own groups\' only, filters and pages included', async (t) => {
      const all = await page('limit=100', rita)
      t.same(names(all), ritaSees)
      t.equal(all.total, ritaSees.length)
      const seen: string[] = []
      for (let skip = 0; skip < ritaSees.length; skip += 2) seen.push(...names(await page(`limit=2&skip=${skip}`, rita)))
      t.same(seen, ritaSees, 'pages over the public and own groups merge in one order')
      t.same(names(await page('limit=100&order=-1', rita)), [...ritaSees].reverse())
      const core = await page('contains=core&limit=100', rita)
      t.same(names(core), byteOrder(ritaSees.filter((n) => n.toLowerCase().includes('core'))))
      t.notOk(names(core).includes('Core other'), 'another group\'s group stays hidden under a filter')
      t.same(names(await page('equals=secret%20other', rita)), [])
      t.equal((await page('equals=secret%20other', rita)).total, 0, 'nor counted')
      t.same(names(await page('limit=100', nobody)), byteOrder(PUBLIC), 'a user of no group sees the public groups')
      t.same((await page('limit=100&sort=_id', rita)).items.map((d) => d._id), ritaSees.map((n) => ids.get(n)).sort(), 'by _id too')
    })

    t.test('projections on lists and on one group', async (t) => {
      const only = await page('equals=zeta&include=name')
      t.same(only.items, [{ _id: ids.get('zeta'), name: 'zeta' }], '_id comes along')
      t.same((await page('equals=zeta&include=name,meta&exclude=_id')).items, [{ name: 'zeta', meta: { n: 4 } }])
      const without = (await page('equals=zeta&exclude=members,meta,description')).items[0]
      t.same(Object.keys(without ?? {}).sort(), ['_id', 'gbacRead', 'gbacWrite', 'name', 'version'])
      const id = ids.get('zeta') as string
      const one = await app.inject({ url: `${BASE}/${id}?include=name,version`, headers: { authorization: adminAuth } })
      t.same(one.json(), { _id: id, name: 'zeta', version: 1 })
      t.equal(one.headers.etag, '"1"')
      t.same((await app.inject({ url: `${BASE}/${id}?exclude=_id,members,meta,description,gbacRead,gbacWrite`, headers: { authorization: adminAuth } })).json(), { name: 'zeta', version: 1 })
      for (const query of ['include=colour', 'exclude=secret', 'include=name&exclude=version', 'fields=name']) {
        const bad = await app.inject({ url: `${BASE}/${id}?${query}`, headers: { authorization: adminAuth } })
        t.equal(bad.statusCode, 400, query)
        t.match(bad.json().message, /querystring/)
      }
    })

    t.test('bad parameters: a 400 naming them', async (t) => {
      const cases: Array<[string, RegExp]> = [
        ['limit=0', /querystring\/limit/],
        ['limit=101', /querystring\/limit/],
        ['limit=ten', /querystring\/limit/],
        ['skip=-1', /querystring\/skip/],
        ['skip=99999999999999999999', /querystring\/skip/],
        ['skip=1.5', /querystring\/skip/],
        ['skip=1e400', /querystring\/skip/],
        ['limit=-1e400', /querystring\/limit/],
        ['order=0', /querystring\/order/],
        ['order=desc', /querystring\/order/],
        ['sort=version', /querystring\/sort names unknown field "version"/],
        ['equals=x&equalsField=members', /querystring\/equalsField names unknown field "members"/],
        ['containsField=name', /without querystring\/contains/],
        ['include=name,colour', /querystring\/include names unknown field "colour"/],
        ['contains=', /querystring\/contains/],
        [`contains=${'x'.repeat(256)}`, /querystring\/contains/],
        ['contains=a%00b', /querystring\/contains/],
        ['limit=1&limit=2', /querystring\/limit/],
        ['page=2', /additional properties \('page'\)/]
      ]
      for (const [query, message] of cases) {
        const response = await list(query)
        t.equal(response.statusCode, 400, query)
        t.match(response.json(), { statusCode: 400, error: 'Bad Request', message }, query)
      }
    })

    t.test('hostile parameter values: a page or a 400, never a 500', async (t) => {
      const keys = ['limit', 'skip', 'sort', 'order', 'include', 'exclude', 'equals', 'equalsField', 'contains', 'containsField',
        'starts-with', 'startsWith', 'startsWithField', 'constructor', '__proto__', 'skip[]', 'limit[0]']
      const value = fc.oneof(
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.constantFrom('0', '-1', '1', '1e3', '1e400', 'NaN', '99999999999999999999', '0x10', ' 5', '_id', 'name', '%', '\\', '%00', 'name,_id', ''),
        fc.integer().map(String),
        fc.double().map(String)
      )
      await fc.assert(fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...keys), value), { maxLength: 5 }), fc.boolean(), async (pairs, asReader) => {
        const query = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')
        const response = await list(query, asReader ? rita : adminAuth)
        if (response.statusCode === 200) {
          const body = response.json() as Page
          return Array.isArray(body.items) && body.count === body.items.length && body.items.length <= body.limit
        }
        return response.statusCode === 400 && typeof response.json().message === 'string'
      }), { numRuns: 150 })
      t.pass('no 500 over the runs')
    })

    t.test('users and adapters speak the same language', async (t) => {
      const users = await app.inject({ url: '/users?sort=username&order=-1&include=username&limit=2', headers: { authorization: adminAuth } })
      t.same(users.json(), { items: [{ username: 'rita' }, { username: 'nobody' }], count: 2, skip: 0, end: 2, limit: 2, total: 3, next: 2, previous: null })
      t.same((await app.inject({ url: '/users?starts-with=RI&include=username', headers: { authorization: adminAuth } })).json().items, [{ username: 'rita' }])
      t.equal((await app.inject({ url: '/users?skip=99999999999999999999', headers: { authorization: adminAuth } })).statusCode, 400)
      t.equal((await app.inject({ url: '/users?contains=x&containsField=password', headers: { authorization: adminAuth } })).statusCode, 400)
      for (const id of ['nso-a', 'nso-b', 'lab-c']) {
        const created = await app.inject({ method: 'POST', url: '/orchestrator_manager/adapters', headers: { authorization: adminAuth }, payload: { id, baseUrl: `https://${id}.example.net`, username: 'u', password: 'p' } })
        t.equal(created.statusCode, 200)
      }
      const adapters = await app.inject({ url: '/orchestrator_manager/adapters?starts-with=nso&exclude=ca,createdAt,updatedAt&limit=1', headers: { authorization: adminAuth } })
      t.same(adapters.json(), {
        items: [{ id: 'nso-a', baseUrl: 'https://nso-a.example.net', username: 'u', timeoutMs: 30000, rejectUnauthorized: true }],
        count: 1,
        skip: 0,
        end: 1,
        limit: 1,
        total: 2,
        next: 1,
        previous: null
      })
      const byUrl = await app.inject({ url: '/orchestrator_manager/adapters?contains=LAB-C.example&containsField=baseUrl&include=id', headers: { authorization: adminAuth } })
      t.same(byUrl.json().items, [{ id: 'lab-c' }])
    })
  })

  t.test(`contains when most names share a word, on ${database}: the same groups, the word left to a filter`, async (t) => {
    const app = await buildTestApp(t, { database })
    const names = ['Core netops', 'core edge', 'Core lab', 'core other', 'alpha core', 'netops', 'edge']
    for (const name of names) {
      const response = await app.inject({ method: 'POST', url: BASE, headers: { authorization: adminAuth }, payload: { componentGroup: { name, gbacRead: [], members: [] } } })
      if (response.statusCode !== 200) throw new Error(response.body)
    }
    await app.db.query('ANALYZE component_groups') // the statistics migrations/010 keeps on the names' trigrams
    const frequent = await app.componentGroupsRepository.frequentNameTrigrams()
    t.ok(frequent.has('cor') && frequent.has('ore'), `the trigrams of "core" are frequent (${[...frequent].join('|')})`)
    t.notOk(frequent.has('net'), 'those of "netops" are not')
    for (const [value, expected] of [['CORE NETOPS', ['Core netops']], ['core edg', ['core edge']], ['e ne', ['Core netops']], ['core', names.filter((n) => n.toLowerCase().includes('core'))]] as const) {
      const response = await app.inject({ url: `${BASE}?contains=${encodeURIComponent(value)}&limit=100`, headers: { authorization: adminAuth } })
      t.same(response.json().items.map((d: Doc) => d.name).sort(), [...expected].sort(), `contains=${value}`)
    }
  })
}
