// A JSON body naming a key twice, at any level, is a 400 naming the key; JSON.parse would keep
// the last one silently (`"gbacRead":["netops"], "gbacRead":[]` would make a group public).
import t from 'tap'
import fc from 'fast-check'
import { adminAuth, buildTestApp, testDatabases } from '../helper.js'
import { assertStillServing, createGroup, databaseDigest, injectWithin } from './hostile.js'

const headers = { authorization: adminAuth, 'content-type': 'application/json' }

/**
 * `value` as JSON text with the `target`-th object met (depth first) naming its first key a
 * second time, with `again` as its value. Returns the text and the path of the repeated key.
 */
function withDuplicate (value: unknown, target: number, again: string): { text: string, path: string[] | undefined } {
  let seen = 0
  let found: string[] | undefined
  const write = (v: unknown, path: string[]): string => {
    if (Array.isArray(v)) return `[${v.map((item, i) => write(item, [...path, String(i)])).join(',')}]`
    if (typeof v !== 'object' || v === null) return JSON.stringify(v)
    const entries = Object.entries(v).map(([k, item]) => `${JSON.stringify(k)}:${write(item, [...path, k])}`)
    const first = Object.keys(v)[0]
    if (seen++ === target && first !== undefined && found === undefined) {
      found = [...path, first]
      entries.push(`${JSON.stringify(first)}:${again}`)
    }
    return `{${entries.join(',')}}`
  }
  return { text: write(value, []), path: found }
}

// Numbers beyond 2^53 - 1 are refused on their own (numbers.test.ts): kept out of these bodies.
const safeNumbers = (v: unknown): unknown => JSON.parse(JSON.stringify(v, (_k, x: unknown) =>
  typeof x === 'number' && !Number.isSafeInteger(Math.trunc(x)) ? 1 : x)) as unknown

const objects = (v: unknown): number => Array.isArray(v)
  ? v.reduce((n: number, item) => n + objects(item), 0)
  : typeof v === 'object' && v !== null ? 1 + Object.values(v).reduce((n: number, item) => n + objects(item), 0) : 0

// Refused while the body is parsed, before the database is reached: one database is enough,
// the last one (the server when there is one: it starts faster).
for (const database of testDatabases.slice(-1)) {
  t.test(`duplicate keys on ${database}`, async (t) => {
    // Garbage on purpose: the answers are checked against the OpenAPI document, not these requests.
    const app = await buildTestApp(t, { database, checkRequests: false })
    const id = await createGroup(app)
    const before = await databaseDigest(app)

    const incident = await injectWithin(app, {
      method: 'PUT',
      url: `/studio/component-groups/${id}`,
      headers,
      payload: '{"update":{"name":"hostile","members":[],"gbacRead":["netops"],"gbacRead":[]}}'
    })
    t.match(incident.json(), { statusCode: 400, code: 'JSON_DUPLICATE_KEY', message: /^body\/update\/gbacRead / })

    const bodies = fc.oneof(
      fc.record({ componentGroup: fc.record({ name: fc.constant('dup'), members: fc.constant([]), gbacRead: fc.constant([]), meta: fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { minKeys: 1, maxKeys: 4 }) }) })
        .map((body) => ({ method: 'POST' as const, url: '/studio/component-groups', body })),
      fc.record({ update: fc.record({ name: fc.constant('dup'), members: fc.constant([{ type: 'folder', path: ['a'] }]), gbacRead: fc.constant(['netops']), meta: fc.object({ maxDepth: 3 }) }) })
        .map((body) => ({ method: 'PUT' as const, url: `/studio/component-groups/${id}`, body })),
      fc.constant({ method: 'POST' as const, url: '/users', body: { username: 'dup-user', password: 'long-enough-password', roles: [], groups: ['a'] } })
    )
    await fc.assert(fc.asyncProperty(bodies, fc.nat(), fc.constantFrom('[]', '"x"', 'null', '{}', '1'), async (request, pick, again) => {
      const sent = safeNumbers(request.body)
      const { text, path } = withDuplicate(sent, pick % objects(sent), again)
      if (path === undefined) return true
      const response = await injectWithin(app, { method: request.method, url: request.url, headers, payload: text })
      const body = response.json() as { code?: string, message?: string }
      const ok = response.statusCode === 400 && body.code === 'JSON_DUPLICATE_KEY' && (body.message ?? '').startsWith('body/')
      if (!ok) t.comment(`${text.slice(0, 200)} -> ${response.statusCode} ${response.body.slice(0, 200)}`)
      return ok
    }), { numRuns: Number(process.env.HOSTILE_RUNS ?? 80) })

    t.equal(await databaseDigest(app), before, 'nothing was stored')
    await assertStillServing(t, app)
  })
}
