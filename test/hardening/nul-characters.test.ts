// A NUL character (U+0000) in any string a request carries (body values and keys, query
// parameters, path parameters) is a 400 naming where it is, on every route; nothing stored.
import t from 'tap'
import fc from 'fast-check'
import { adminAuth, buildTestApp, testDatabases } from '../helper.js'
import { assertStillServing, createGroup, databaseDigest, injectWithin } from './hostile.js'

const headers = { authorization: adminAuth, 'content-type': 'application/json' }
const withNul = fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })).map(([a, b]) => `${a}\u0000${b}`)
const group = (over: Record<string, unknown>): Record<string, unknown> => ({ name: 'nul-probe', members: [], gbacRead: [], ...over })

type Probe = { method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, where: RegExp }

/** Every place a string goes, each with `s` (holding a NUL) put there. */
function probes (id: string, s: string): Probe[] {
  const q = encodeURIComponent(s)
  return [
    { method: 'POST', url: '/studio/component-groups', payload: { componentGroup: group({ name: s }) }, where: /^body\/componentGroup\/name /m },
    { method: 'POST', url: '/studio/component-groups', payload: { componentGroup: group({ description: s }) }, where: /^body\/componentGroup\/description / },
    { method: 'POST', url: '/studio/component-groups', payload: { componentGroup: group({ meta: { [s]: 1 } }) }, where: /^body\/componentGroup\/meta\// },
    { method: 'POST', url: '/studio/component-groups', payload: { componentGroup: group({ meta: { a: [{ b: s }] } }) }, where: /^body\/componentGroup\/meta\/a\/0\/b / },
    { method: 'POST', url: '/studio/component-groups', payload: { componentGroup: group({ gbacRead: ['ok', s] }) }, where: /^body\/componentGroup\/gbacRead\/1 / },
    { method: 'PUT', url: `/studio/component-groups/${id}`, payload: { update: group({ gbacWrite: [s] }) }, where: /^body\/update\/gbacWrite\/0 / },
    { method: 'PUT', url: `/studio/component-groups/${id}`, payload: { update: group({ members: [{ type: 'folder', path: ['a', s] }] }) }, where: /^body\/update\/members\/0\/path\/1 / },
    { method: 'POST', url: '/studio/component-groups/import', payload: { componentGroups: [group({ name: s })] }, where: /^body\/componentGroups\/0\/name / },
    { method: 'POST', url: '/users', payload: { username: 'nul-user', password: 'long-enough-password', email: `a${s}@b.c` }, where: /^body\/email / },
    { method: 'POST', url: '/users', payload: { username: 'nul-user', password: 'long-enough-password', groups: [s] }, where: /^body\/groups\/0 / },
    { method: 'POST', url: '/users', payload: { username: 'nul-user', password: `long-enough-${s}` }, where: /^body\/password / },
    { method: 'POST', url: '/orchestrator_manager/adapters', payload: { id: 'nso', baseUrl: 'http://127.0.0.1:1', username: s, password: 'p' }, where: /^body\/username / },
    { method: 'GET', url: `/studio/component-groups?contains=${q}`, where: /^querystring\/contains / },
    { method: 'GET', url: `/studio/component-groups?contains=x&sort=${q}`, where: /^querystring\/sort / },
    { method: 'GET', url: `/studio/component-groups/${q}`, where: /^params\/id / },
    { method: 'DELETE', url: `/studio/component-groups/${q}`, where: /^params\/id / },
    { method: 'GET', url: `/users/${q}`, where: /^params\/username / },
    { method: 'PUT', url: `/users/${q}`, payload: { disabled: true }, where: /^params\/username / },
    { method: 'GET', url: `/orchestrator_manager/adapters/${q}`, where: /^params\/id / },
    { method: 'POST', url: `/orchestrator_manager/restQuery/${q}`, payload: { params: { path: '/x', accept: 'application/yang-data+json' } }, where: /^params\/adapterId / },
    { method: 'POST', url: '/orchestrator_manager/restQuery/nso', payload: { params: { path: `/x${s}`, accept: 'application/yang-data+json' } }, where: /^body\/params\/path / },
    { method: 'POST', url: `/git/GitHub/repos/${q}/branches/main/projects/p.json`, payload: {}, where: /^params\/repoPath / },
    { method: 'POST', url: '/git/GitHub/repos/a%2Fb/branches/main/projects/p.json', payload: { commitMessage: s }, where: /^body\/commitMessage / }
  ]
}

// Refused while the request is validated, before the database is reached: one database is enough,
// the last one (the server when there is one: it starts faster).
for (const database of testDatabases.slice(-1)) {
  t.test(`NUL characters on ${database}`, async (t) => {
    // Garbage on purpose: the answers are checked against the OpenAPI document, not these requests.
    const app = await buildTestApp(t, { database, checkRequests: false })
    const id = await createGroup(app)
    const count = probes(id, '\u0000').length
    const before = await databaseDigest(app)

    await fc.assert(fc.asyncProperty(withNul, fc.nat({ max: count - 1 }), async (s, index) => {
      const probe = probes(id, s)[index] as Probe
      const response = await injectWithin(app, {
        method: probe.method, url: probe.url, headers, ...(probe.payload === undefined ? {} : { payload: JSON.stringify(probe.payload) })
      })
      const body = response.json() as { code?: string, message?: string }
      const ok = response.statusCode === 400 && body.code === 'NUL_CHARACTER' && probe.where.test(body.message ?? '')
      if (!ok) t.comment(`${probe.method} ${probe.url.slice(0, 80)}: ${response.statusCode} ${response.body.slice(0, 200)}`)
      return ok
    }), { numRuns: Number(process.env.HOSTILE_RUNS ?? 3 * count) })

    t.equal(await databaseDigest(app), before, 'nothing was stored')
    await assertStillServing(t, app)
  })
}

// The body is searched for a NUL only when its text escapes one (\u0000): an escaped backslash
// followed by "u0000" is six ordinary characters, and in any spelling of the escape the NUL is found.
t.test('a NUL is found in the body however its text spells it, and only then', async (t) => {
  // Garbage on purpose: the answers are checked against the OpenAPI document, not these requests.
  const app = await buildTestApp(t, { database: testDatabases.at(-1), checkRequests: false })
  const post = async (payload: string) => await app.inject({ method: 'POST', url: '/studio/component-groups', headers, payload })
  const lookalike = await post('{"componentGroup":{"name":"nul-lookalike","description":"a\\\\u0000b","members":[],"gbacRead":[]}}')
  t.equal(lookalike.statusCode, 200, lookalike.body)
  t.equal((lookalike.json() as { created: { description: string } }).created.description, 'a\\u0000b')
  for (const [text, where] of [
    ['{"componentGroup":{"name":"nul-a","description":"a\\u0000","members":[],"gbacRead":[]}}', /^body\/componentGroup\/description /],
    ['{"componentGroup":{"name":"nul-b","members":[],"gbacRead":[],"meta":{"k\\u0000":1}}}', /^body\/componentGroup\/meta\//],
    ['{"componentGroup":{"name":"nul-c","description":"\\\\\\u0000","members":[],"gbacRead":[]}}', /^body\/componentGroup\/description /]
  ] as const) {
    const response = await post(text)
    t.equal(response.statusCode, 400, text)
    t.match((response.json() as { message: string }).message, where)
  }
})
