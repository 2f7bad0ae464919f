// Component groups through the HTTP API: create, read, replace, delete, versions, GBAC and concurrency.
// Long: every operation of the one resource, with the helpers and set-ups its cases share.
import t from 'tap'
import pg from 'pg'
import { adminAuth, buildTestApp, createTestDatabase, createUser, testDatabases, type TestApp } from '../../helper.js'
import { until } from '../../helpers/until.js'

const BASE = '/studio/component-groups'
const ID = /^[0-9a-f]{24}$/
const MISSING = '0123456789abcdef01234567'

const folder = (...path: string[]) => ({ path, type: 'folder' as const })
const component = (path: string, ref: string) => ({ path, type: 'component' as const, sourceCollection: 'automations', ref })

type Doc = Record<string, unknown> & { _id: string, version: number, name: string }

async function create (app: TestApp, auth: string, group: Record<string, unknown>): Promise<Doc> {
  const response = await app.inject({ method: 'POST', url: BASE, headers: { authorization: auth }, payload: { componentGroup: group } })
  if (response.statusCode !== 200) throw new Error(`create: ${response.statusCode} ${response.body}`)
  return response.json().created
}

async function fetchDoc (app: TestApp, id: string): Promise<Doc> {
  return (await app.inject({ url: `${BASE}/${id}`, headers: { authorization: adminAuth } })).json()
}

for (const database of testDatabases) {
  t.test(`component groups on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database })
    // dana designs for netops; lee also leads it; rita only reads; otto designs elsewhere.
    const dana = await createUser(app, { username: 'dana', roles: ['designer'], groups: ['netops'] })
    const lee = await createUser(app, { username: 'lee', roles: ['apiwrite'], groups: ['netops', 'leads'] })
    const rita = await createUser(app, { username: 'rita', groups: ['netops'] })
    const otto = await createUser(app, { username: 'otto', roles: ['designer'], groups: ['other'] })

    t.test('create, read, replace, list and delete; every response carries every field', async (t) => {
      const created = await app.inject({
        method: 'POST',
        url: BASE,
        headers: { authorization: dana },
        payload: {
          componentGroup: {
            _id: 'ffffffffffffffffffffffff',
            version: 17,
            name: 'Core routers',
            gbacRead: [],
            members: [folder('Network', 'Core'), component('/Network/Core/Backup', 'ab12')]
          }
        }
      })
      t.equal(created.statusCode, 200)
      t.equal(created.headers.etag, '"1"')
      const doc = created.json().created
      t.match(doc._id, ID)
      t.not(doc._id, 'ffffffffffffffffffffffff', 'a supplied _id is ignored')
      t.same(doc, {
        _id: doc._id,
        name: 'Core routers',
        description: '',
        members: [folder('Network', 'Core'), component('/Network/Core/Backup', 'ab12')],
        gbacRead: [],
        gbacWrite: [],
        version: 1,
        meta: {}
      }, 'defaults applied, supplied version ignored')
      t.equal(created.json().edit, `/studio/#/edit?tab=0&component-group=${doc._id}`)

      const got = await app.inject({ url: `${BASE}/${doc._id}`, headers: { authorization: rita } })
      t.equal(got.statusCode, 200)
      t.equal(got.headers.etag, '"1"')
      t.same(got.json(), doc)

      const update = {
        name: 'Core routers (EU)',
        description: 'Backbone',
        members: [folder('Network', 'EU')],
        gbacRead: ['netops'],
        gbacWrite: ['leads'],
        meta: { owner: 'dana', tags: ['eu'], nested: { n: 1 } }
      }
      const replaced = await app.inject({ method: 'PUT', url: `${BASE}/${doc._id}`, headers: { authorization: dana }, payload: { update } })
      t.equal(replaced.statusCode, 200)
      t.equal(replaced.headers.etag, '"2"')
      t.same(replaced.json(), {
        updated: { _id: doc._id, ...update, version: 2 },
        edit: `/studio/#/edit?tab=0&component-group=${doc._id}`
      })
      t.same(await fetchDoc(app, doc._id), { _id: doc._id, ...update, version: 2 }, 'stored as answered')

      const again = await app.inject({
        method: 'PUT', url: `${BASE}/${doc._id}`, headers: { authorization: lee }, payload: { update: { name: 'Core routers (EU)', members: [], gbacRead: ['netops'] } }
      })
      t.equal(again.statusCode, 200)
      t.same(again.json().updated, {
        _id: doc._id, name: 'Core routers (EU)', description: '', members: [], gbacRead: ['netops'], gbacWrite: [], version: 3, meta: {}
      }, 'a replacement is whole: absent optional fields go back to their defaults')

      const listed = await app.inject({ url: `${BASE}?contains=core`, headers: { authorization: rita } })
      t.equal(listed.statusCode, 200)
      t.same(listed.json(), { items: [again.json().updated], count: 1, skip: 0, end: 1, limit: 25, total: 1, next: null, previous: null })

      const deleted = await app.inject({ method: 'DELETE', url: `${BASE}/${doc._id}`, headers: { authorization: dana } })
      t.equal(deleted.statusCode, 200)
      t.same(deleted.json(), { message: `Component group "${doc._id}" deleted`, deleted: again.json().updated }, 'the platform\'s message, and the group')
      t.equal((await app.inject({ url: `${BASE}/${doc._id}`, headers: { authorization: adminAuth } })).statusCode, 404)
      t.equal((await app.inject({ method: 'DELETE', url: `${BASE}/${doc._id}`, headers: { authorization: adminAuth } })).statusCode, 404)
    })

    t.test('PUT without update answers the document unchanged', async (t) => {
      const doc = await create(app, dana, { name: 'Unchanged', gbacRead: [], members: [folder('A')], meta: { keep: true } })
      const response = await app.inject({ method: 'PUT', url: `${BASE}/${doc._id}`, headers: { authorization: dana }, payload: {} })
      t.equal(response.statusCode, 200)
      t.equal(response.headers.etag, '"1"')
      t.same(response.json().updated, doc)
      t.same(await fetchDoc(app, doc._id), doc, 'version not bumped')
      const stale = await app.inject({ method: 'PUT', url: `${BASE}/${doc._id}`, headers: { authorization: dana, 'if-match': '"7"' }, payload: {} })
      t.equal(stale.statusCode, 409, 'a stale If-Match is a conflict even without update')
      const matching = await app.inject({ method: 'PUT', url: `${BASE}/${doc._id}`, headers: { authorization: dana, 'if-match': '"1"' }, payload: {} })
      t.equal(matching.statusCode, 200)
      t.equal((await app.inject({ method: 'PUT', url: `${BASE}/${MISSING}`, headers: { authorization: dana }, payload: {} })).statusCode, 404)
    })

    t.test('bad PUT input is a 400 naming the problem, and changes nothing', async (t) => {
      const doc = await create(app, dana, { name: 'Guarded', gbacRead: [], members: [folder('G')] })
      const good = { name: 'Guarded', gbacRead: [], members: [] }
      const cases: Array<{ payload: unknown, message: RegExp, headers?: Record<string, string> }> = [
        { payload: { update: { ...good, _id: doc._id } }, message: /^body\/update must NOT have additional properties \('_id'\)$/ },
        { payload: { update: { ...good, colour: 'red' } }, message: /additional properties \('colour'\)/ },
        { payload: { update: good, extra: 1 }, message: /^body must NOT have additional properties \('extra'\)$/ },
        { payload: { update: { ...good, name: 42 } }, message: /body\/update\/name must be string/ },
        { payload: { update: { ...good, name: '' } }, message: /name/ },
        { payload: { update: { ...good, name: '   ' } }, message: /name must match pattern/ },
        { payload: { update: { ...good, name: 'x'.repeat(256) } }, message: /name must NOT have more than 255 characters/ },
        { payload: { update: { ...good, members: 'all' } }, message: /members must be array/ },
        { payload: { update: { ...good, members: [{ path: 'x', type: 'folder' }] } }, message: /members\/0/ },
        { payload: { update: { ...good, members: [{ path: ['x'], type: 'device' }] } }, message: /members\/0/ },
        { payload: { update: { ...good, members: [{ path: '/x', type: 'component' }] } }, message: /members\/0/ },
        { payload: { update: { ...good, members: [folder()] } }, message: /members\/0/ },
        { payload: { update: { ...good, gbacRead: 'netops' } }, message: /gbacRead must be array/ },
        { payload: { update: { ...good, gbacRead: ['a', 'a'] } }, message: /gbacRead must NOT have duplicate items/ },
        { payload: { update: { ...good, gbacWrite: [''] } }, message: /gbacWrite\/0/ },
        { payload: { update: { ...good, meta: [] } }, message: /meta must be object/ },
        { payload: { update: { ...good, description: null } }, message: /description must be string/ },
        { payload: { update: { ...good, version: '1' } }, message: /version must be integer/ },
        { payload: { update: { ...good, version: 0 } }, message: /version must be >= 1/ },
        { payload: { update: { name: 'Guarded', members: [] } }, message: /must have required property 'gbacRead'/ },
        { payload: { update: null }, message: /update must be object/ },
        { payload: [], message: /body must be object/ },
        { payload: { update: good }, headers: { 'if-match': '1' }, message: /If-Match must be "\*" or a comma-separated list of quoted ETags/ },
        { payload: { update: good }, headers: { 'if-match': '"1" "2"' }, message: /If-Match/ },
        { payload: { update: { ...good, version: 1 } }, headers: { 'if-match': '"2"' }, message: /update\.version \(1\) contradicts If-Match/ }
      ]
      for (const c of cases) {
        const response = await app.inject({
          method: 'PUT', url: `${BASE}/${doc._id}`, headers: { authorization: dana, ...c.headers }, payload: c.payload as object
        })
        const name = `${JSON.stringify(c.payload).slice(0, 100)} ${JSON.stringify(c.headers ?? {})}`
        t.equal(response.statusCode, 400, name)
        t.match(response.json(), { statusCode: 400, error: 'Bad Request', message: c.message }, name)
      }
      const badId = await app.inject({ method: 'PUT', url: `${BASE}/not-an-id`, headers: { authorization: dana }, payload: { update: good } })
      t.equal(badId.statusCode, 400)
      t.match(badId.json().message, /params\/id must match pattern/)
      const notJson = await app.inject({ method: 'PUT', url: `${BASE}/${doc._id}`, headers: { authorization: dana, 'content-type': 'application/json' }, payload: '{"update":' })
      t.equal(notJson.statusCode, 400)
      t.same(await fetchDoc(app, doc._id), doc, 'nothing changed')
    })

    t.test('unknown id: 404 on every operation', async (t) => {
      const update = { name: 'Nobody', gbacRead: [], members: [] }
      for (const request of [
        { method: 'GET' as const },
        { method: 'PUT' as const, payload: { update } },
        { method: 'PUT' as const, payload: { update }, headers: { 'if-match': '"1"' } },
        { method: 'DELETE' as const }
      ]) {
        const response = await app.inject({ ...request, url: `${BASE}/${MISSING}`, headers: { authorization: adminAuth, ...request.headers } })
        t.equal(response.statusCode, 404, request.method)
        t.match(response.json(), { statusCode: 404, error: 'Not Found', message: `Component group "${MISSING}" not found` })
      }
      t.equal((await app.inject({ url: `${BASE}?contains=Nobody`, headers: { authorization: adminAuth } })).json().total, 0, 'nothing was created')
    })

    t.test('duplicate names are a 409 on create and on replace', async (t) => {
      const first = await create(app, dana, { name: 'Edge', gbacRead: [], members: [] })
      const second = await create(app, dana, { name: 'Access', gbacRead: [], members: [] })
      const dup = await app.inject({ method: 'POST', url: BASE, headers: { authorization: dana }, payload: { componentGroup: { name: 'Edge', gbacRead: [], members: [] } } })
      t.equal(dup.statusCode, 409)
      t.match(dup.json(), { statusCode: 409, error: 'Conflict', code: 'NAME_TAKEN', message: /"Edge" already exists/ })
      const rename = await app.inject({ method: 'PUT', url: `${BASE}/${second._id}`, headers: { authorization: dana }, payload: { update: { name: 'Edge', gbacRead: [], members: [] } } })
      t.equal(rename.statusCode, 409)
      t.match(rename.json(), { code: 'NAME_TAKEN', message: /"Edge"/ })
      t.same(await fetchDoc(app, second._id), second, 'the loser is unchanged')
      t.same(await fetchDoc(app, first._id), first)
      const names = (await app.inject({ url: `${BASE}?contains=edge`, headers: { authorization: adminAuth } })).json()
      t.equal(names.total, 1)
      const renamed = await app.inject({ method: 'PUT', url: `${BASE}/${first._id}`, headers: { authorization: dana }, payload: { update: { name: 'Edge', gbacRead: [], members: [] } } })
      t.equal(renamed.statusCode, 200, 'keeping its own name is no conflict')
    })

    t.test('bad create input is a 400 and creates nothing', async (t) => {
      const cases: Array<[unknown, RegExp]> = [
        [{}, /must have required property 'componentGroup'/],
        [{ componentGroup: { gbacRead: [], members: [] } }, /required property 'name'/],
        [{ componentGroup: { name: 'No members', gbacRead: [] } }, /required property 'members'/],
        [{ componentGroup: { name: 'No read', members: [] } }, /required property 'gbacRead'/],
        [{ componentGroup: { name: 'Extra', gbacRead: [], members: [], owner: 'x' } }, /additional properties \('owner'\)/],
        [{ componentGroup: { name: 'Bad id', gbacRead: [], members: [], _id: 5 } }, /_id must be string/],
        [{ componentGroup: { name: 'Bad version', gbacRead: [], members: [], version: 'one' } }, /version must be number/],
        [{ componentGroup: { name: 'Too many', gbacRead: [], members: Array.from({ length: 2001 }, () => folder('x')) } }, /members must NOT have more than 2000 items/]
      ]
      for (const [payload, message] of cases) {
        const response = await app.inject({ method: 'POST', url: BASE, headers: { authorization: dana }, payload: payload as object })
        t.equal(response.statusCode, 400, JSON.stringify(payload).slice(0, 100))
        t.match(response.json().message, message)
      }
      for (const name of ['No members', 'No read', 'Extra', 'Bad id', 'Bad version', 'Too many']) {
        t.equal((await app.inject({ url: `${BASE}?contains=${encodeURIComponent(name)}`, headers: { authorization: adminAuth } })).json().total, 0, name)
      }
    })

    t.test('roles: reads for any user, writes for admin, designer and apiwrite; no credentials: 401', async (t) => {
      const doc = await create(app, adminAuth, { name: 'Roles', gbacRead: [], members: [] })
      const update = { name: 'Roles', gbacRead: [], members: [folder('R')] }
      t.equal((await app.inject({ url: `${BASE}/${doc._id}`, headers: { authorization: rita } })).statusCode, 200)
      t.equal((await app.inject({ url: BASE, headers: { authorization: rita } })).statusCode, 200)
      for (const request of [
        { method: 'POST' as const, url: BASE, payload: { componentGroup: { name: 'By reader', gbacRead: [], members: [] } } },
        { method: 'POST' as const, url: `${BASE}/import`, payload: { componentGroups: [{ name: 'By reader', gbacRead: [], members: [] }] } },
        { method: 'PUT' as const, url: `${BASE}/${doc._id}`, payload: { update } },
        { method: 'DELETE' as const, url: `${BASE}/${doc._id}` }
      ]) {
        const response = await app.inject({ ...request, headers: { authorization: rita } })
        t.equal(response.statusCode, 403, `${request.method} ${request.url}`)
        t.match(response.json().message, /admin, designer, apiwrite/)
        t.equal((await app.inject({ ...request, url: request.url })).statusCode, 401, 'and without credentials')
      }
      t.equal((await app.inject({ url: `${BASE}/${doc._id}` })).statusCode, 401)
      t.same(await fetchDoc(app, doc._id), doc, 'nothing changed')
      t.equal((await app.inject({ url: `${BASE}?contains=By%20reader`, headers: { authorization: adminAuth } })).json().total, 0)
      const byApi = await app.inject({ method: 'PUT', url: `${BASE}/${doc._id}`, headers: { authorization: lee }, payload: { update } })
      t.equal(byApi.statusCode, 200, 'apiwrite may write')
    })

    t.test('GBAC: unreadable is 404 and absent from lists; readable but not writable is 403; admin bypasses', async (t) => {
      const secret = await create(app, adminAuth, { name: 'GBAC secret', gbacRead: ['netops'], gbacWrite: ['leads'], members: [folder('S')] })
      const update = { name: 'GBAC secret', gbacRead: ['netops'], gbacWrite: ['leads'], members: [] }

      t.equal((await app.inject({ url: `${BASE}/${secret._id}`, headers: { authorization: otto } })).statusCode, 404, 'outsider cannot see it')
      const ottoList = (await app.inject({ url: `${BASE}?contains=GBAC`, headers: { authorization: otto } })).json()
      t.match(ottoList, { items: [], count: 0, total: 0 }, 'nor list or count it')
      for (const request of [
        { method: 'PUT' as const, payload: { update } },
        { method: 'PUT' as const, payload: { update }, headers: { 'if-match': '"1"' } },
        { method: 'PUT' as const, payload: {} },
        { method: 'DELETE' as const }
      ]) {
        const response = await app.inject({ ...request, url: `${BASE}/${secret._id}`, headers: { authorization: otto, ...request.headers } })
        t.equal(response.statusCode, 404, `outsider ${request.method} ${JSON.stringify(request.payload)}`)
      }

      t.equal((await app.inject({ url: `${BASE}/${secret._id}`, headers: { authorization: dana } })).statusCode, 200, 'a netops member reads it')
      for (const request of [
        { method: 'PUT' as const, payload: { update } },
        { method: 'PUT' as const, payload: { update }, headers: { 'if-match': '"9"' } },
        { method: 'PUT' as const, payload: {} },
        { method: 'DELETE' as const }
      ]) {
        const response = await app.inject({ ...request, url: `${BASE}/${secret._id}`, headers: { authorization: dana, ...request.headers } })
        t.equal(response.statusCode, 403, `reader-only ${request.method} ${JSON.stringify(request.headers)}`)
        t.match(response.json(), { statusCode: 403, message: /gbacWrite/ })
      }
      t.same(await fetchDoc(app, secret._id), secret, 'nothing changed')

      const byLead = await app.inject({ method: 'PUT', url: `${BASE}/${secret._id}`, headers: { authorization: lee }, payload: { update } })
      t.equal(byLead.statusCode, 200, 'a leads member writes it')
      t.equal(byLead.json().updated.version, 2)

      const lockedOut = { name: 'GBAC secret', gbacRead: ['admins-only'], gbacWrite: [], members: [] }
      const handedOver = await app.inject({ method: 'PUT', url: `${BASE}/${secret._id}`, headers: { authorization: lee }, payload: { update: lockedOut } })
      t.equal(handedOver.statusCode, 200, 'a writer may give the group away')
      t.equal((await app.inject({ url: `${BASE}/${secret._id}`, headers: { authorization: lee } })).statusCode, 404, 'and then no longer sees it')
      const adminGet = await app.inject({ url: `${BASE}/${secret._id}`, headers: { authorization: adminAuth } })
      t.equal(adminGet.statusCode, 200, 'admin reads whatever the lists say')
      t.equal((await app.inject({ url: `${BASE}?contains=GBAC`, headers: { authorization: adminAuth } })).json().total, 1)
      const adminPut = await app.inject({ method: 'PUT', url: `${BASE}/${secret._id}`, headers: { authorization: adminAuth, 'if-match': '"3"' }, payload: { update: lockedOut } })
      t.equal(adminPut.statusCode, 200, 'and writes')
      const adminDelete = await app.inject({ method: 'DELETE', url: `${BASE}/${secret._id}`, headers: { authorization: adminAuth } })
      t.equal(adminDelete.statusCode, 200)
    })

    t.test('versions: If-Match and update.version make a replacement conditional; stale is 409', async (t) => {
      const doc = await create(app, dana, { name: 'Versioned', gbacRead: [], members: [] })
      const put = async (headers: Record<string, string>, update: Record<string, unknown> = {}) => await app.inject({
        method: 'PUT', url: `${BASE}/${doc._id}`, headers: { authorization: dana, ...headers }, payload: { update: { name: 'Versioned', gbacRead: [], members: [], ...update } }
      })
      t.equal((await put({ 'if-match': '"1"' })).headers.etag, '"2"')
      const stale = await put({ 'if-match': '"1"' }, { description: 'lost?' })
      t.equal(stale.statusCode, 409)
      t.match(stale.json(), { statusCode: 409, error: 'Conflict', code: 'VERSION_CONFLICT', message: /has changed since the version given/ })
      t.equal((await fetchDoc(app, doc._id)).description, '', 'the stale write changed nothing')
      t.equal((await put({}, { version: 1 })).statusCode, 409, 'a stale update.version too')
      t.equal((await put({}, { version: 2 })).headers.etag, '"3"', 'a current update.version applies')
      t.equal((await put({ 'if-match': '"2", "3"' })).headers.etag, '"4"', 'any of a list')
      t.equal((await put({ 'if-match': '*' })).headers.etag, '"5"', '* is unconditional')
      t.equal((await put({ 'if-match': 'W/"5"' })).statusCode, 409, 'a weak tag never matches')
      t.equal((await put({ 'if-match': '"5"' }, { version: 5 })).headers.etag, '"6"', 'both given and agreeing')
      t.equal((await put({})).headers.etag, '"7"', 'unconditional')
      const final = await fetchDoc(app, doc._id)
      t.equal(final.version, 7)

      const del = await app.inject({ method: 'DELETE', url: `${BASE}/${doc._id}`, headers: { authorization: dana, 'if-match': '"6"' } })
      t.equal(del.statusCode, 409, 'a stale conditional delete deletes nothing')
      t.equal((await fetchDoc(app, doc._id)).version, 7)
      const badDel = await app.inject({ method: 'DELETE', url: `${BASE}/${doc._id}`, headers: { authorization: dana, 'if-match': 'seven' } })
      t.equal(badDel.statusCode, 400)
      const ok = await app.inject({ method: 'DELETE', url: `${BASE}/${doc._id}`, headers: { authorization: dana, 'if-match': '"7"' } })
      t.equal(ok.statusCode, 200)
      t.equal(ok.json().deleted.version, 7)
    })

    t.test('list: pages, sorting, case-insensitive literal contains, and bad queries', async (t) => {
      const names = ['List 50%_off', 'List 50 percent off', 'list alpha', 'List beta', 'LIST gamma', 'List back\\slash']
      const docs: Doc[] = []
      for (const name of names) docs.push(await create(app, dana, { name, gbacRead: [], members: [] }))
      const beta = docs[3] as Doc
      for (let i = 0; i < 3; i++) {
        await app.inject({ method: 'PUT', url: `${BASE}/${beta._id}`, headers: { authorization: dana }, payload: { update: { name: 'List beta', gbacRead: [], members: [] } } })
      }
      const list = async (query: string, auth = rita) => await app.inject({ url: `${BASE}?${query}`, headers: { authorization: auth } })

      const byteOrder = [...names].sort() // the platform's order: code units, capitals first
      const all = (await list('contains=list&limit=100')).json()
      t.equal(all.total, 6)
      t.same(all.items.map((d: Doc) => d.name), byteOrder, 'by name ascending by default')
      const page = (await list('contains=LiSt&sort=name&order=-1&limit=2&skip=1')).json()
      t.equal(page.total, 6, 'total counts every match, not the page')
      t.same(page.items.map((d: Doc) => d.name), [...byteOrder].reverse().slice(1, 3))
      t.match(page, { count: 2, skip: 1, end: 3, limit: 2, next: 3, previous: 0 }, 'the neighbouring pages')
      const byId = (await list('contains=list&sort=_id&order=-1&limit=1')).json()
      t.equal(byId.items[0]._id, [...docs].map((d) => d._id).sort().reverse()[0], 'by _id')
      t.same((await list('contains=50%25_off')).json().items.map((d: Doc) => d.name), ['List 50%_off'], '% and _ are literal')
      t.same((await list('contains=_')).json().total, 1)
      t.same((await list('contains=%25')).json().total, 1)
      t.same((await list('contains=k%5Cs')).json().items.map((d: Doc) => d.name), ['List back\\slash'], 'so is a backslash')
      t.same((await list('contains=list&skip=100')).json(), { items: [], count: 0, skip: 100, end: 100, limit: 25, total: 6, next: null, previous: 75 },
        'past the end: empty page, true total')
      const firstPage = (await list('')).json()
      t.ok(firstPage.items.length <= 25 && firstPage.limit === 25, 'limit defaults to 25')
      t.equal(beta.name, 'List beta')

      for (const query of ['limit=0', 'limit=101', 'skip=-1', 'sort=version', 'order=up', 'order=0', 'contains=', 'limt=5', 'limit=ten']) {
        const response = await list(query)
        t.equal(response.statusCode, 400, query)
        t.match(response.json(), { statusCode: 400, error: 'Bad Request', message: /querystring/ })
      }
      t.match((await list('limt=5')).json().message, /querystring must NOT have additional properties \('limt'\)/, 'a typo is named')
    })

    t.test('import: new ids, numeric suffixes for taken names, all or nothing', async (t) => {
      const existing = await create(app, dana, { name: 'Imported', gbacRead: [], members: [] })
      await create(app, dana, { name: 'Imported (1)', gbacRead: [], members: [] })
      const response = await app.inject({
        method: 'POST',
        url: `${BASE}/import`,
        headers: { authorization: lee },
        payload: {
          componentGroups: [
            { _id: existing._id, version: 9, name: 'Imported', description: 'copy', gbacRead: ['netops'], members: [folder('I')], meta: { from: 'export' } },
            { name: 'Imported', gbacRead: [], members: [] },
            { name: 'Fresh import', gbacRead: [], gbacWrite: ['leads'], members: [component('/c', 'r1')] }
          ]
        }
      })
      t.equal(response.statusCode, 200)
      const results: Array<{ success: boolean, message: string, original: Doc, created: Doc }> = response.json().imported
      t.ok(results.every((r) => r.success), 'each result says so')
      t.same(results.map((r) => r.original.name), ['Imported', 'Imported', 'Fresh import'], 'each with the group as given')
      t.same(results.map((r) => r.message), [
        'Imported component group "Imported" as "Imported (2)" (the name was taken)',
        'Imported component group "Imported" as "Imported (3)" (the name was taken)',
        'Imported component group "Fresh import"'
      ])
      const imported = results.map((r) => r.created)
      t.same(imported.map((d) => d.name), ['Imported (2)', 'Imported (3)', 'Fresh import'])
      t.ok(imported.every((d) => ID.test(d._id) && d._id !== existing._id && d.version === 1), 'new ids, version 1')
      t.equal(new Set(imported.map((d) => d._id)).size, 3)
      t.same(imported[0], { _id: imported[0]?._id, name: 'Imported (2)', description: 'copy', members: [folder('I')], gbacRead: ['netops'], gbacWrite: [], version: 1, meta: { from: 'export' } })
      t.same(await fetchDoc(app, existing._id), existing, 'the group whose _id was supplied is untouched')
      for (const doc of imported) t.same(await fetchDoc(app, doc._id), doc, 'stored as answered')

      const long = 'L'.repeat(255)
      await create(app, dana, { name: long, gbacRead: [], members: [] })
      const longImport = await app.inject({ method: 'POST', url: `${BASE}/import`, headers: { authorization: dana }, payload: { componentGroups: [{ name: long, gbacRead: [], members: [] }] } })
      t.equal(longImport.json().imported[0].created.name, `${'L'.repeat(251)} (1)`, 'a suffixed name still fits 255 characters')

      const empty = await app.inject({ method: 'POST', url: `${BASE}/import`, headers: { authorization: dana }, payload: { componentGroups: [] } })
      t.same(empty.json(), { imported: [] })

      const before = (await app.inject({ url: `${BASE}?limit=1`, headers: { authorization: adminAuth } })).json().total
      for (const payload of [
        { componentGroups: [{ name: 'Atomic one', gbacRead: [], members: [] }, { name: 'Atomic two', members: [] }] },
        { componentGroups: [{ name: 'Atomic one', gbacRead: [], members: [], extra: true }] },
        { componentGroups: Array.from({ length: 501 }, (_, i) => ({ name: `Atomic ${i}`, gbacRead: [], members: [] })) },
        { componentGroups: { name: 'Atomic one' } },
        { groups: [] }
      ]) {
        const bad = await app.inject({ method: 'POST', url: `${BASE}/import`, headers: { authorization: dana }, payload })
        t.equal(bad.statusCode, 400)
      }
      // A failure inside the database part rolls back what the import already wrote.
      const atomic = (name: string) => ({ name, description: '', members: [], gbacRead: [], gbacWrite: [], meta: {} })
      await t.rejects(app.componentGroupsRepository.importAll([
        ...Array.from({ length: 150 }, (_, i) => atomic(`Atomic ${i}`)), // a first batch stored before the failure
        atomic('x'.repeat(300))
      ], 30_000, { username: 'dana', method: 'basic' }), /check constraint/)
      t.equal((await app.inject({ url: `${BASE}?limit=1`, headers: { authorization: adminAuth } })).json().total, before, 'nothing was imported')
    })

    t.test('edit links use PUBLIC_URL when set', async (t) => {
      const withUrl = await buildTestApp(t, { database: 'any', env: { PUBLIC_URL: 'https://automation.example.com/api/' } })
      const created = await withUrl.inject({ method: 'POST', url: BASE, headers: { authorization: adminAuth }, payload: { componentGroup: { name: 'Linked', gbacRead: [], members: [] } } })
      const id: string = created.json().created._id
      t.equal(created.json().edit, `https://automation.example.com/api/studio/#/edit?tab=0&component-group=${id}`)
      const updated = await withUrl.inject({ method: 'PUT', url: `${BASE}/${id}`, headers: { authorization: adminAuth }, payload: {} })
      t.equal(updated.json().edit, `https://automation.example.com/api/studio/#/edit?tab=0&component-group=${id}`)
    })
  })

  t.test(`no lost update under concurrency on ${database}`, async (t) => {
    // On the server, two instances share the database, so the guarantee cannot come from one process.
    const shared = await createTestDatabase(t, database, { migrated: true })
    const first = await buildTestApp(t, { database: shared })
    const second = database === 'postgres' ? await buildTestApp(t, { database: shared }) : first
    const instances = [first, second]
    for (const app of instances) {
      // Verified credentials are cached: the concurrent requests below then race on the row only.
      t.equal((await app.inject({ url: BASE, headers: { authorization: adminAuth } })).statusCode, 200)
    }
    const put = (i: number, headers: Record<string, string>, id: string) => (instances[i % instances.length] as TestApp).inject({
      method: 'PUT',
      url: `${BASE}/${id}`,
      headers: { authorization: adminAuth, ...headers },
      payload: { update: { name: `Raced ${id}`, gbacRead: [], members: [folder(`writer ${i}`)], meta: { writer: i } } }
    })

    t.test('20 concurrent PUTs with the same If-Match: exactly one succeeds', async (t) => {
      const doc = await create(first, adminAuth, { name: 'Conditional race', gbacRead: [], members: [] })
      const responses = await Promise.all(Array.from({ length: 20 }, async (_, i) => await put(i, { 'if-match': '"1"' }, doc._id)))
      const codes = responses.map((r) => r.statusCode)
      t.equal(codes.filter((c) => c === 200).length, 1, `one 200 (got ${codes.join(',')})`)
      t.equal(codes.filter((c) => c === 409).length, 19, 'the others 409')
      const winner = responses.find((r) => r.statusCode === 200)?.json().updated
      t.equal(winner.version, 2)
      t.same(await fetchDoc(first, doc._id), winner, 'the stored document is the winner\'s')
    })

    t.test('30 concurrent unconditional PUTs: the version grows by exactly 30', async (t) => {
      const doc = await create(first, adminAuth, { name: 'Unconditional race', gbacRead: [], members: [] })
      const responses = await Promise.all(Array.from({ length: 30 }, async (_, i) => await put(i, {}, doc._id)))
      t.same(responses.map((r) => r.statusCode), Array(30).fill(200))
      const versions = responses.map((r) => r.json().updated.version as number).sort((a, b) => a - b)
      t.same(versions, Array.from({ length: 30 }, (_, i) => i + 2), 'each write saw its own version, 2 to 31')
      const stored = await fetchDoc(first, doc._id)
      t.equal(stored.version, 31)
      const last = responses.find((r) => r.json().updated.version === 31)?.json().updated
      t.same(stored, last, 'the stored document is the last writer\'s')
    })
  })
}

if (testDatabases.includes('postgres')) {
  t.test('an import that loses a name to a concurrent create starts again with a free name', async (t) => {
    const database = await createTestDatabase(t, 'postgres')
    const app = await buildTestApp(t, { database })
    const other = new pg.Client({ connectionString: database.env.DATABASE_URL })
    await other.connect()
    t.teardown(async () => { await other.end() })
    await other.query('BEGIN')
    await other.query('INSERT INTO component_groups (id, name, doc) VALUES (\'aaaaaaaaaaaaaaaaaaaaaaaa\', \'Contested\', \'{"description":"","members":[],"meta":{}}\')')
    const importing = app.inject({ method: 'POST', url: `${BASE}/import`, headers: { authorization: adminAuth }, payload: { componentGroups: [{ name: 'Contested', gbacRead: [], members: [] }] } })
    // Wait until the import's insert waits on the uncommitted row (a lock this session blocks),
    // then commit it. pg_locks, not pg_stat_activity: inside a transaction the latter is read
    // once and kept, and would miss a connection opened since.
    await until(async () => {
      const { rows } = await other.query('SELECT 1 FROM pg_locks WHERE NOT granted AND pg_backend_pid() = ANY (pg_blocking_pids(pid))')
      return rows.length > 0
    }, 'the import waits on the uncommitted row', 10_000)
    t.pass('the import waited on the uncommitted row')
    await other.query('COMMIT')
    const response = await importing
    t.equal(response.statusCode, 200)
    t.equal(response.json().imported[0].created.name, 'Contested (1)')
  })
}

t.test('every component-group route is in the OpenAPI document with its schemas', async (t) => {
  const app = await buildTestApp(t, { database: 'any' })
  const doc = (await app.inject({ url: '/openapi.json' })).json()
  const routes: Array<[string, string, number[]]> = [
    ['/studio/component-groups', 'get', [200, 400, 401, 429, 503]],
    ['/studio/component-groups', 'post', [200, 400, 401, 403, 409, 413, 415, 429, 503]],
    ['/studio/component-groups/import', 'post', [200, 400, 401, 403, 409, 413, 415, 429, 503]],
    ['/studio/component-groups/{id}', 'get', [200, 400, 401, 404, 414, 429, 503]],
    ['/studio/component-groups/{id}', 'put', [200, 400, 401, 403, 404, 409, 413, 414, 415, 429, 503]],
    ['/studio/component-groups/{id}', 'delete', [200, 400, 401, 403, 404, 409, 413, 414, 415, 429, 503]]
  ]
  for (const [path, method, statuses] of routes) {
    const operation = doc.paths[path]?.[method]
    t.ok(operation, `${method} ${path}`)
    t.same(Object.keys(operation?.responses ?? {}).sort(), statuses.map(String).sort(), `${method} ${path} responses`)
    t.same(operation.security, [{ basicAuth: [] }, { bearerAuth: [] }, { cookieAuth: [] }, { queryToken: [] }])
    t.ok(operation.responses['200'].content['application/json'].schema, 'a 200 schema')
  }
  const put = doc.paths['/studio/component-groups/{id}'].put
  const update = put.requestBody.content['application/json'].schema.properties.update
  t.same(update.required, ['name', 'members', 'gbacRead'])
  t.equal(update.additionalProperties, false)
  t.notOk('_id' in update.properties)
  t.same(update.properties.members.items, { $ref: '#/components/schemas/ComponentGroupMember' }, 'a named member schema')
  t.same(doc.components.schemas.ComponentGroupMember.anyOf.map((m: { properties: { type: { enum: string[] } } }) => m.properties.type.enum), [['folder'], ['component']])
  t.ok(put.responses['200'].headers.ETag, 'the ETag header is documented')
  t.same(put.parameters.map((p: { in: string, name: string }) => `${p.in}:${p.name}`).sort(), ['header:if-match', 'path:id'])
  t.same(put.responses['200'].content['application/json'].schema.properties.updated, { $ref: '#/components/schemas/ComponentGroup' })
  t.same(doc.components.schemas.ComponentGroup.required.sort(), ['_id', 'description', 'gbacRead', 'gbacWrite', 'members', 'meta', 'name', 'version'])
  const list = doc.paths['/studio/component-groups'].get
  t.same(list.parameters.map((p: { name: string }) => p.name).sort(), [
    'contains', 'containsField', 'contains[name]', 'equals', 'equalsField', 'equals[name]', 'exclude', 'in[name]', 'include', 'limit', 'not-in[name]',
    'order', 'skip', 'sort', 'starts-with', 'starts-with[name]', 'startsWith', 'startsWithField', 'startsWith[name]'
  ])
  t.notOk(list.parameters.some((p: { required?: boolean }) => p.required === true), 'every list parameter is optional')
  t.equal(list.parameters.find((p: { name: string }) => p.name === 'limit').schema.default, 25)
  t.same(list.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/ComponentGroupPage' })
  t.same(doc.components.schemas.ComponentGroupPage.required.sort(), ['count', 'end', 'items', 'limit', 'next', 'previous', 'skip', 'total'])
  const one = doc.paths['/studio/component-groups/{id}'].get
  t.same(one.parameters.map((p: { in: string, name: string }) => `${p.in}:${p.name}`).sort(), ['path:id', 'query:exclude', 'query:include'])
  t.ok(doc.paths['/studio/component-groups/import'].post.requestBody.content['application/json'].schema.properties.componentGroups)
})
