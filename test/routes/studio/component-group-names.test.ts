// Names are unique across the service (docs/decisions.md, "Component group names are unique
// across teams"): a writer learns that a name is in use, and nothing more. Whether the group
// holding it is one the writer may read or not never changes an answer: create, rename and
// import answer alike, word for word but the name.
import t from 'tap'
import { adminAuth, buildTestApp, createUser } from '../../helper.js'

const BASE = '/studio/component-groups'

t.test('a taken name answers alike whether the writer may read its group or not', async (t) => {
  const app = await buildTestApp(t)
  const dana = await createUser(app, { username: 'dana', roles: ['designer'], groups: ['netops'] })
  const create = async (auth: string, name: string, gbacRead: string[]) =>
    await app.inject({ method: 'POST', url: BASE, headers: { authorization: auth }, payload: { componentGroup: { name, gbacRead, members: [] } } })
  // "Hidden core" dana may not read; "Open core" she may.
  for (const [name, gbacRead] of [['Hidden core', ['other']], ['Hidden core (1)', ['other']], ['Open core', []], ['Open core (1)', []]] as const) {
    t.equal((await create(adminAuth, name, [...gbacRead])).statusCode, 200)
  }
  const visible = (await app.inject({ url: `${BASE}?limit=100`, headers: { authorization: dana } })).json().items.map((d: { name: string }) => d.name)
  t.notOk(visible.includes('Hidden core'), 'dana may not read Hidden core')
  t.ok(visible.includes('Open core'), 'dana may read Open core')

  // The answer with the name taken out: what is left must be the same, headers included.
  const shape = (response: Awaited<ReturnType<typeof create>>, name: string) => ({
    statusCode: response.statusCode,
    headers: Object.keys(response.headers).filter((h) => !['date', 'content-length'].includes(h)).sort(),
    body: response.body.replaceAll(name, '<name>').replace(/"_id":"[0-9a-f]{24}"/g, '"_id":"<id>"')
  })

  t.test('create', async (t) => {
    const hidden = await create(dana, 'Hidden core', ['netops'])
    const open = await create(dana, 'Open core', ['netops'])
    t.equal(hidden.statusCode, 409)
    t.equal(hidden.json().code, 'NAME_TAKEN')
    t.same(shape(hidden, 'Hidden core'), shape(open, 'Open core'))
  })

  t.test('rename', async (t) => {
    const own = (await create(dana, 'Dana\'s group', ['netops'])).json().created._id as string
    const rename = async (name: string) => await app.inject({
      method: 'PUT', url: `${BASE}/${own}`, headers: { authorization: dana }, payload: { update: { name, gbacRead: ['netops'], members: [] } }
    })
    t.same(shape(await rename('Hidden core'), 'Hidden core'), shape(await rename('Open core'), 'Open core'))
  })

  t.test('import: the same suffix and message, whoever may read the group holding the name', async (t) => {
    const response = await app.inject({
      method: 'POST',
      url: `${BASE}/import`,
      headers: { authorization: dana },
      payload: { componentGroups: [{ name: 'Hidden core', gbacRead: ['netops'], members: [] }, { name: 'Open core', gbacRead: ['netops'], members: [] }] }
    })
    t.equal(response.statusCode, 200)
    const [hidden, open] = response.json().imported as Array<{ message: string, created: { name: string } }>
    t.same([hidden?.created.name, open?.created.name], ['Hidden core (2)', 'Open core (2)'])
    t.equal(hidden?.message.replaceAll('Hidden core', '<name>'), open?.message.replaceAll('Open core', '<name>'))
  })
})
