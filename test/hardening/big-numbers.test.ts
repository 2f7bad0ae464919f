// Numbers beyond 2^53 - 1 anywhere in a JSON body are refused (400 naming the field): JavaScript
// would round them silently. Numbers within it are stored and read back exactly.
import t from 'tap'
import fc from 'fast-check'
import { adminAuth, buildTestApp, testDatabases } from '../helper.js'
import { assertStillServing, createGroup, databaseDigest, injectWithin } from './hostile.js'

const headers = { authorization: adminAuth, 'content-type': 'application/json' }
const LIMIT = BigInt(Number.MAX_SAFE_INTEGER)

// Literals as a client writes them: integers just past the limit and far past it, exponents.
const unsafe = fc.oneof(
  fc.bigInt({ min: LIMIT + 1n, max: LIMIT * 1000n }).map(String),
  fc.bigInt({ min: LIMIT + 1n, max: 2n ** 128n }).map(String),
  fc.integer({ min: 16, max: 400 }).map((e) => `1e${e}`),
  fc.double({ min: 1e16, max: 1e300, noNaN: true }).map((d) => d.toExponential())
).chain((literal) => fc.constantFrom(literal, `-${literal}`))

const key = fc.string({ minLength: 1, maxLength: 6 }).filter((k) => k !== '__proto__' && k !== 'constructor')

/** `literal` at a path of keys (objects) or indexes (arrays) inside meta. */
function place (literal: string, path: Array<string | number>): string {
  let text = literal
  for (const step of [...path].reverse()) text = typeof step === 'number' ? `[${'0,'.repeat(step)}${text}]` : `{${JSON.stringify(step)}:${text}}`
  return text
}

for (const database of testDatabases) {
  t.test(`big numbers on ${database}`, async (t) => {
    // Garbage on purpose: the answers are checked against the OpenAPI document, not these requests.
    const app = await buildTestApp(t, { database, checkRequests: false })
    const id = await createGroup(app)
    const before = await databaseDigest(app)
    await fc.assert(fc.asyncProperty(unsafe, key, fc.array(fc.oneof(key, fc.nat({ max: 3 })), { maxLength: 5 }), fc.boolean(),
      async (literal, first, path, replace) => {
        const meta = place(literal, [first, ...path])
        const payload = replace
          ? `{"update":{"name":"big","members":[],"gbacRead":[],"meta":${meta}}}`
          : `{"componentGroup":{"name":"big","members":[],"gbacRead":[],"meta":${meta}}}`
        const response = await injectWithin(app, { method: replace ? 'PUT' : 'POST', url: `/studio/component-groups${replace ? `/${id}` : ''}`, headers, payload })
        const body = response.json() as { code?: string, message?: string }
        const ok = response.statusCode === 400 && body.code === 'JSON_UNSAFE_NUMBER' && /^body\/(update|componentGroup)\/meta\//.test(body.message ?? '')
        if (!ok) t.comment(`${payload.slice(0, 150)} -> ${response.statusCode} ${response.body.slice(0, 200)}`)
        return ok
      }), { numRuns: Number(process.env.HOSTILE_RUNS ?? 60) })
    t.equal(await databaseDigest(app), before, 'nothing was stored')

    const safe = fc.oneof(fc.maxSafeInteger(), fc.double({ min: -1e15, max: 1e15, noNaN: true }).map((d) => (d === 0 ? 0 : d)))
    await fc.assert(fc.asyncProperty(fc.array(safe, { minLength: 1, maxLength: 8 }), async (numbers) => {
      const response = await injectWithin(app, { method: 'PUT', url: `/studio/component-groups/${id}`, headers, payload: JSON.stringify({ update: { name: 'exact', members: [], gbacRead: [], meta: { numbers } } }) })
      const read = await injectWithin(app, { url: `/studio/component-groups/${id}`, headers })
      return response.statusCode === 200 && JSON.stringify((read.json() as { meta: unknown }).meta) === JSON.stringify({ numbers })
    }), { numRuns: 25 })
    t.pass('numbers within 2^53 - 1 are read back exactly')
    await assertStillServing(t, app)
  })
}
