// Pages bounded in bytes as well as items (LIST_MAX_PAGE_BYTES), on both databases: a page of
// big groups stops early, `next` goes on from there, walking it reads every group once, and no
// page's payload passes the bound unless one item alone does.
import t, { type Test } from 'tap'
import { adminAuth, buildTestApp, createUser, testDatabases } from '../../helper.js'

const BASE = '/studio/component-groups'
const BOUND = 100_000
const META = 60_000 // a big group's meta: two of them do not fit the bound

interface Page { items: Array<{ _id: string, name: string }>, count: number, skip: number, limit: number, total: number, next: number | null, previous: number | null }

for (const database of testDatabases) {
  t.test(`list pages bounded in bytes on ${database}`, async (t) => {
    const app = await buildTestApp(t, { database, env: { LIST_MAX_PAGE_BYTES: String(BOUND) } })
    const rita = await createUser(app, { username: 'rita', groups: ['netops'] })
    const create = async (name: string, gbacRead: string[], big: boolean): Promise<string> => {
      const response = await app.inject({
        method: 'POST',
        url: BASE,
        headers: { authorization: adminAuth },
        payload: { componentGroup: { name, gbacRead, members: [], meta: big ? { blob: 'x'.repeat(META) } : { small: true } } }
      })
      if (response.statusCode !== 200) throw new Error(response.body)
      return response.json().created._id
    }
    // Big and small groups interleaved, public and restricted (a reader's page merges two sets).
    const names: string[] = []
    for (let i = 0; i < 12; i++) {
      const name = `group ${String(i).padStart(2, '0')}`
      names.push(name)
      await create(name, i % 3 === 0 ? ['netops'] : [], i % 2 === 0)
    }

    const walk = async (t: Test, query: string, auth: string) => {
      const seen: string[] = []
      let skip: number | null = 0
      let pages = 0
      while (skip !== null) {
        const response: { statusCode: number, body: string, json: () => Page } = await app.inject({ url: `${BASE}?${query}&skip=${String(skip)}`, headers: { authorization: auth } })
        t.equal(response.statusCode, 200)
        const page: Page = response.json()
        t.ok(page.count >= 1 && page.count <= page.limit, `skip ${skip}: at least one item, at most limit`)
        t.equal(page.count, page.items.length)
        t.ok(Buffer.byteLength(response.body) <= BOUND, `skip ${skip}: the payload (${Buffer.byteLength(response.body)} bytes) is within the bound`)
        t.equal(page.total, names.length)
        t.equal(page.next, skip + page.count < page.total ? skip + page.count : null, 'next: right after the page\'s last item')
        seen.push(...page.items.map((d) => d.name))
        skip = page.next
        if (++pages > names.length) throw new Error('next never ends')
      }
      return { seen, pages }
    }

    t.test('a page of big groups stops early; next goes on; every group is read once', async (t) => {
      const first: Page = (await app.inject({ url: `${BASE}?limit=100`, headers: { authorization: adminAuth } })).json()
      t.ok(first.count < names.length, `the first page stops early (${first.count} of ${names.length})`)
      t.equal(first.next, first.count)
      const { seen, pages } = await walk(t, 'limit=100', adminAuth)
      t.same(seen, names, 'every group once, in order')
      t.ok(pages >= 6, `six big groups need six pages at least (${pages})`)
      const backwards = await walk(t, 'limit=100&sort=_id&order=-1', adminAuth)
      t.same([...backwards.seen].sort(), names, 'by _id, descending: every group once')
    })

    t.test('a reader\'s page (public and restricted groups merged) is bounded too', async (t) => {
      const { seen } = await walk(t, 'limit=100', rita)
      t.same(seen, names)
    })

    t.test('limit still bounds a page of small groups', async (t) => {
      for (const name of ['small a', 'small b', 'small c', 'small d']) {
        const id = await create(name, [], false)
        t.teardown(async () => { await app.inject({ method: 'DELETE', url: `${BASE}/${id}`, headers: { authorization: adminAuth } }) })
      }
      const page: Page = (await app.inject({ url: `${BASE}?limit=3&starts-with=small`, headers: { authorization: adminAuth } })).json()
      t.same({ count: page.count, next: page.next }, { count: 3, next: 3 })
    })

    t.test('an item larger than the bound comes alone on its page', async (t) => {
      const members = Array.from({ length: 120 }, (_, i) => ({ type: 'component', path: `${'p'.repeat(1000)}${i}`, sourceCollection: 'c', ref: String(i) }))
      const response = await app.inject({ method: 'POST', url: BASE, headers: { authorization: adminAuth }, payload: { componentGroup: { name: 'group 05b', gbacRead: [], members } } })
      t.equal(response.statusCode, 200)
      t.teardown(async () => { await app.inject({ method: 'DELETE', url: `${BASE}/${response.json().created._id as string}`, headers: { authorization: adminAuth } }) })
      const at = names.indexOf('group 05') + 1
      const alone = await app.inject({ url: `${BASE}?limit=100&skip=${at}`, headers: { authorization: adminAuth } })
      const page: Page = alone.json()
      t.same(page.items.map((d) => d.name), ['group 05b'])
      t.equal(page.next, at + 1)
      t.ok(Buffer.byteLength(alone.body) > BOUND, 'the one item is larger than the bound')
    })

    t.test('the users list shares the bound', async (t) => {
      // Five users of about 32 KB (256 groups of 120 characters): four fit the bound.
      const groups = Array.from({ length: 256 }, (_, i) => `${'g'.repeat(117)}${String(i).padStart(3, '0')}`)
      for (let i = 0; i < 5; i++) await createUser(app, { username: `user-${i}`, groups })
      const response = await app.inject({ url: '/users?limit=100', headers: { authorization: adminAuth } })
      const page: Page = response.json()
      t.ok(page.count < page.total, `the page stops early (${page.count} of ${page.total})`)
      t.equal(page.next, page.count)
    })
  })
}
