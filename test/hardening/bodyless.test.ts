// A request with `Content-Type: application/json` and an empty body is a request without a body
// (platform clients send the header on every call); a non-empty invalid body is still a 400.
// Every answer carries X-Content-Type-Options: nosniff.
import t from 'tap'
import fc from 'fast-check'
import { adminAuth, buildTestApp, testDatabases } from '../helper.js'
import { assertStillServing, databaseDigest, injectWithin } from './hostile.js'

const json = { authorization: adminAuth, 'content-type': 'application/json' }
const emptyBodies = ['', ' ', '\n', '\r\n\t ']

// How a body is read does not depend on the database: one is enough, the last one (the server
// when there is one: it starts faster).
for (const database of testDatabases.slice(-1)) {
  t.test(`bodyless calls on ${database}`, async (t) => {
    // Garbage on purpose: the answers are checked against the OpenAPI document, not these requests.
    const app = await buildTestApp(t, { database, checkRequests: false })
    const created = await injectWithin(app, {
      method: 'POST',
      url: '/studio/component-groups',
      headers: json,
      payload: JSON.stringify({ componentGroup: { name: 'bodyless', members: [], gbacRead: [] } })
    })
    t.equal(created.statusCode, 200)
    const id = (created.json() as { created: { _id: string } }).created._id

    for (const body of emptyBodies) {
      const get = await injectWithin(app, { method: 'GET', url: `/studio/component-groups/${id}`, headers: json, payload: body })
      t.equal(get.statusCode, 200, `GET with an empty JSON body (${JSON.stringify(body)}) answers`)
      const put = await injectWithin(app, { method: 'PUT', url: `/studio/component-groups/${id}`, headers: json, payload: body })
      t.equal(put.statusCode, 200, 'PUT without a body returns the document unchanged')
      t.equal((put.json() as { updated: { version: number } }).updated.version, 1)
      const create = await injectWithin(app, { method: 'POST', url: '/studio/component-groups', headers: json, payload: body })
      t.equal(create.statusCode, 400, 'a create without a body is refused by its schema')
      t.match(create.json(), { message: /body/ })
    }
    const git = await injectWithin(app, { method: 'POST', url: '/git/NoSuchProvider/repos/a%2Fb/branches/main/projects/p.json', headers: json, payload: '' })
    t.match(git.json(), { statusCode: 400, message: /Unknown Git provider/ }, 'a Git initialization without a body gets as far as its provider')

    const before = await databaseDigest(app)
    await fc.assert(fc.asyncProperty(
      fc.constantFrom('{', '[', '"', 'nul', '{"a":}', '{}}', ',', '\u0000', '{"a":1,}'),
      fc.constantFrom('POST /studio/component-groups', `PUT /studio/component-groups/${id}`, `DELETE /studio/component-groups/${id}`, 'POST /users'),
      async (payload, route) => {
        const [method, url] = route.split(' ') as ['POST', string]
        const response = await injectWithin(app, { method, url, headers: json, payload })
        return response.statusCode === 400
      }), { numRuns: 60 })
    t.equal(await databaseDigest(app), before, 'invalid bodies changed nothing')

    const deleted = await injectWithin(app, { method: 'DELETE', url: `/studio/component-groups/${id}`, headers: json, payload: '' })
    t.equal(deleted.statusCode, 200, 'DELETE with an empty JSON body deletes')
    await assertStillServing(t, app)
  })
}

t.test('every answer says nosniff', async (t) => {
  // Garbage on purpose: the answers are checked against the OpenAPI document, not these requests.
  const app = await buildTestApp(t, { database: 'any', checkRequests: false })
  const answers = await Promise.all([
    injectWithin(app, { url: '/health' }),
    injectWithin(app, { url: '/ready' }),
    injectWithin(app, { url: '/studio/component-groups' }),
    injectWithin(app, { url: '/studio/component-groups', headers: { authorization: adminAuth } }),
    injectWithin(app, { url: '/no/such/route' }),
    injectWithin(app, { url: '/studio/component-groups/%zz', headers: { authorization: adminAuth } }),
    injectWithin(app, { method: 'POST', url: '/studio/component-groups', headers: json, payload: '{"a":1,"a":2}' }),
    injectWithin(app, { method: 'POST', url: '/studio/component-groups', headers: { ...json, 'content-type': 'text/html' }, payload: '<b>' })
  ])
  const statuses = answers.map((a) => a.statusCode)
  t.same(new Set(statuses).size >= 5, true, `several kinds of answer: ${statuses.join(', ')}`)
  for (const answer of answers) t.equal(answer.headers['x-content-type-options'], 'nosniff', `${answer.statusCode} carries nosniff`)
})
