// Deeply nested JSON at every free-form field (meta, Git project, relayed body): a 400 naming the
// field, nothing stored, no hang; the database keeps answering.
import t from 'tap'
import fc from 'fast-check'
import { adminAuth, buildTestApp, testDatabases } from '../helper.js'
import { FREE_FORM_MAX_DEPTH } from '../../schemas/common.js'
import { MAX_BODY_DEPTH } from '../../lib/http/json-text.js'
import { assertStillServing, createGroup, databaseDigest, freeFormFields, injectWithin } from './hostile.js'

const headers = { authorization: adminAuth, 'content-type': 'application/json' }

/** A JSON object nested `depth` levels (itself 1), each level an object or an array as `shape` says. */
function nested (depth: number, shape: boolean[]): string {
  let open = '{"k":'
  let close = '}'
  for (let level = 1; level < depth; level++) {
    const object = shape[level % shape.length] ?? true
    open += object ? '{"k":' : '['
    close = (object ? '}' : ']') + close
  }
  return `${open}1${close}`
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')

for (const database of testDatabases) {
  t.test(`deep nesting on ${database}`, async (t) => {
    // Garbage on purpose: the answers are checked against the OpenAPI document, not these requests.
    const app = await buildTestApp(t, { database, checkRequests: false })
    const id = await createGroup(app)
    const fields = freeFormFields(id)
    const before = await databaseDigest(app)

    await fc.assert(fc.asyncProperty(
      fc.constantFrom(...fields),
      fc.oneof(fc.integer({ min: FREE_FORM_MAX_DEPTH + 1, max: MAX_BODY_DEPTH + 10 }), fc.integer({ min: MAX_BODY_DEPTH, max: 12_000 })),
      fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
      async (field, depth, shape) => {
        const response = await injectWithin(app, { method: field.method, url: field.url, headers, payload: field.body(nested(depth, shape)) })
        const message = (response.json() as { message?: string }).message ?? ''
        if (response.statusCode !== 400 || !new RegExp(`^${escape(field.field)}\\b`).test(message)) {
          t.comment(`${field.field} at depth ${depth}: ${response.statusCode} ${message.slice(0, 200)}`)
          return false
        }
        return true
      }), { numRuns: Number(process.env.HOSTILE_RUNS ?? 80) })

    t.equal(await databaseDigest(app), before, 'nothing was stored')
    await assertStillServing(t, app)
  })

  t.test(`meta at the depth limit is kept whole on ${database}`, async (t) => {
    // Garbage on purpose: the answers are checked against the OpenAPI document, not these requests.
    const app = await buildTestApp(t, { database, checkRequests: false })
    const meta = nested(FREE_FORM_MAX_DEPTH, [true, false])
    const created = await injectWithin(app, {
      method: 'POST',
      url: '/studio/component-groups',
      headers,
      payload: `{"componentGroup":{"name":"deepest","members":[],"gbacRead":[],"meta":${meta}}}`
    })
    t.equal(created.statusCode, 200, `${FREE_FORM_MAX_DEPTH} levels are accepted`)
    const id = (created.json() as { created: { _id: string } }).created._id
    const read = await injectWithin(app, { url: `/studio/component-groups/${id}`, headers })
    t.same((read.json() as { meta: unknown }).meta, JSON.parse(meta), 'and read back as sent')
    const deeper = await injectWithin(app, {
      method: 'POST',
      url: '/studio/component-groups',
      headers,
      payload: `{"componentGroup":{"name":"deeper","members":[],"gbacRead":[],"meta":${nested(FREE_FORM_MAX_DEPTH + 1, [true])}}}`
    })
    t.match(deeper.json(), { statusCode: 400, message: `body/componentGroup/meta must NOT be nested more than ${FREE_FORM_MAX_DEPTH} levels deep` })
    const big = await injectWithin(app, {
      method: 'POST',
      url: '/studio/component-groups',
      headers,
      payload: { componentGroup: { name: 'big', members: [], gbacRead: [], meta: { text: 'x'.repeat(70_000) } } }
    })
    t.match(big.json(), { statusCode: 400, message: /^body\/componentGroup\/meta must NOT be larger than 65536 bytes/ })
    await assertStillServing(t, app)
  })
}
