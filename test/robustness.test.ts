// Thousands of generated bad requests against every route in the OpenAPI document: none may
// answer 5xx, crash the process, or change data.
import t from 'tap'
import fc from 'fast-check'
import { adminAuth, buildTestApp, testDatabases, type TestApp } from './helper.js'
import { databaseDigest as digest } from './hardening/hostile.js'

interface Operation { method: string, path: string, hasBody: boolean }

function operations (app: TestApp): Operation[] {
  const paths = app.swagger().paths ?? {}
  const result: Operation[] = []
  for (const [path, item] of Object.entries(paths)) {
    for (const method of ['get', 'post', 'put', 'delete', 'patch'] as const) {
      const operation = (item as Record<string, { requestBody?: { required?: boolean } } | undefined>)[method]
      // A body the route may go without (an ignored optional one, as POST /logout declares) is no body.
      if (operation !== undefined) result.push({ method: method.toUpperCase(), path, hasBody: operation.requestBody?.required === true })
    }
  }
  return result
}

// Path parameters no resource has: odd encodings, traversal, control characters, overlong.
const oddSegment = fc.oneof(
  fc.constantFrom('%00', 'a%00b', '%C0%80', '%ff', '%fe%ff', '%2e%2e', '..%2f..%2fetc', '%', '%zz', '%E2%80%AE', '%0d%0aX-Injected:%201',
    '%2F%2Fevil', '.git%2Fconfig', '%5c%5cevil', 'x'.repeat(3000), '%C0%AE', ' ', '%20', '%09'),
  fc.string({ minLength: 1, maxLength: 40, unit: 'binary' }).map((s) => encodeURIComponent(s) + '%00')
)

function deepJson (depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth)
}

// Objects nested past every limit, under the fields routes take (and unknown ones).
const deepObject = fc.tuple(fc.integer({ min: 60, max: 9000 }), fc.constantFrom('meta', 'project', 'body', 'componentGroup', 'update', 'x'))
  .map(([depth, field]) => `{"${field}":${'{"k":'.repeat(depth)}1${'}'.repeat(depth)}}`)

// A NUL character in a string or a key, at some depth.
const withNul = fc.tuple(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 })).map(([a, b]) => `${a}\u0000${b}`)
const nulBody = fc.tuple(withNul, fc.constantFrom('name', 'username', 'meta', 'params', 'project', 'email'), fc.boolean())
  .map(([text, field, asKey]) => JSON.stringify(asKey ? { [field]: { [text]: 1 } } : { [field]: text }))

// Bodies that no route accepts: wrong JSON types, unknown fields, nonsense nesting, bad bytes.
const badBody = fc.oneof(
  fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.string(), fc.array(fc.jsonValue(), { maxLength: 5 }))
    .map((v) => ({ payload: JSON.stringify(v), contentType: 'application/json' })),
  fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }).map((k) => `x-${k}`), fc.jsonValue({ maxDepth: 3 }), { minKeys: 1, maxKeys: 5 })
    .map((v) => ({ payload: JSON.stringify(v), contentType: 'application/json' })),
  fc.integer({ min: 2000, max: 20000 }).map((depth) => ({ payload: deepJson(depth), contentType: 'application/json' })),
  deepObject.map((payload) => ({ payload, contentType: 'application/json' })),
  nulBody.map((payload) => ({ payload, contentType: 'application/json' })),
  fc.constant({ payload: '{"a":"' + 'x'.repeat(2 * 1024 * 1024) + '"}', contentType: 'application/json' }),
  fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => ({
    payload: Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe, ...bytes]), Buffer.from('"}')]),
    contentType: 'application/json'
  })),
  fc.constantFrom(
    { payload: 'name=x&password=y', contentType: 'application/x-www-form-urlencoded' },
    { payload: 'plain text', contentType: 'text/plain' },
    { payload: '{"truncated":', contentType: 'application/json' },
    { payload: '{}', contentType: 'application/json; charset=utf-16' },
    { payload: '<xml/>', contentType: 'application/xml' },
    { payload: '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}', contentType: 'application/json' }
  )
)

// Bad requests are refused before the database is reached: one database is enough,
// the last one (the server when there is one: it starts faster).
for (const database of testDatabases.slice(-1)) {
  t.test(`generated bad requests on ${database}`, async (t) => {
    // Garbage on purpose: the answers are checked against the OpenAPI document, not these requests.
    const app = await buildTestApp(t, { database, checkRequests: false })
    const ops = operations(app)
    t.ok(ops.length >= 6, `found ${ops.length} operations in the OpenAPI document`)
    const before = await digest(app)
    const seen = new Map<string, number>()

    await fc.assert(fc.asyncProperty(
      fc.constantFrom(...ops), oddSegment, badBody, fc.boolean(),
      async (op, segment, body, authenticated) => {
        const hasParams = op.path.includes('{')
        const url = op.path.replace(/\{[^}]+\}/g, segment)
        const response = await app.inject({
          method: op.method as 'GET',
          url: hasParams || op.hasBody ? url : `${url}?${segment}=${segment}`,
          headers: { ...(authenticated ? { authorization: adminAuth } : {}), 'content-type': body.contentType },
          ...(op.method === 'GET' || op.method === 'DELETE' ? {} : { payload: body.payload })
        })
        const key = `${op.method} ${op.path} ${response.statusCode}`
        seen.set(key, (seen.get(key) ?? 0) + 1)
        // Only routes without a body or parameter may legitimately succeed (e.g. GET lists).
        const acceptable = response.statusCode < 500 && (response.statusCode >= 400 || (!op.hasBody && !hasParams) || op.method === 'GET')
        if (!acceptable) t.comment(`${op.method} ${url.slice(0, 120)} -> ${response.statusCode} ${response.body.slice(0, 200)}`)
        return acceptable
      }
    ), { numRuns: Number(process.env.ROBUSTNESS_RUNS ?? 1500) })

    t.equal(await digest(app), before, 'no data changed')
    t.equal((await app.inject({ url: '/health' })).statusCode, 200, 'the service still answers')
    const statuses = [...seen.keys()].map((k) => Number(k.split(' ').at(-1)))
    t.ok(statuses.every((s) => s < 500), 'no 5xx at all')
    t.ok(statuses.some((s) => s === 400) && statuses.some((s) => s === 401), 'both validation and auth refusals were exercised')
  })
}
