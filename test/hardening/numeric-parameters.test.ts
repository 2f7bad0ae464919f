// Every numeric query-string and path parameter of every route, found in the OpenAPI document (so a
// new route is covered without being listed here), answers non-finite and unsafe numbers with a
// 400 naming the parameter: never a 500, and nothing changes.
import t from 'tap'
import { adminAuth, buildTestApp, testDatabases } from '../helper.js'
import { assertStillServing, createGroup, databaseDigest, injectWithin } from './hostile.js'

const HOSTILE = ['Infinity', '-Infinity', '1e400', '-1e400', '1e20', '-1e20', '9007199254740993']

interface Parameter { name: string, in: string, schema?: { type?: string, pattern?: string, anyOf?: Array<{ type?: string }> } }
interface Operation { parameters?: Parameter[] }
type Document = { paths: Record<string, Record<string, Operation>> }

const isNumeric = (schema: Parameter['schema']): boolean =>
  schema?.type === 'integer' || schema?.type === 'number' || (schema?.anyOf ?? []).some((s) => s.type === 'integer' || s.type === 'number')

for (const database of testDatabases) {
  t.test(`numeric parameters on ${database}`, async (t) => {
    // Garbage on purpose: the answers are checked against the OpenAPI document, not these requests.
    const app = await buildTestApp(t, { database, checkRequests: false })
    const id = await createGroup(app)
    const document = (await injectWithin(app, { url: '/openapi.json', headers: { authorization: adminAuth } })).json() as Document
    const before = await databaseDigest(app)
    const tested: string[] = []
    for (const [template, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const parameters = operation.parameters ?? []
        for (const parameter of parameters.filter((p) => (p.in === 'query' || p.in === 'path') && isNumeric(p.schema))) {
          tested.push(`${method.toUpperCase()} ${template} ${parameter.in} ${parameter.name}`)
          for (const value of HOSTILE) {
            // The other path parameters get values that pass their own checks (an existing group's id).
            let url = template.replace(/\{([^}]+)\}/g, (_whole, name: string) => {
              if (name === parameter.name && parameter.in === 'path') return encodeURIComponent(value)
              const other = parameters.find((p) => p.in === 'path' && p.name === name)
              return other?.schema?.pattern !== undefined ? id : isNumeric(other?.schema) ? '1' : 'x'
            })
            if (parameter.in === 'query') url += `?${encodeURIComponent(parameter.name)}=${encodeURIComponent(value)}`
            const response = await injectWithin(app, { method: method.toUpperCase() as 'GET', url, headers: { authorization: adminAuth } })
            const part = parameter.in === 'query' ? 'querystring' : 'params'
            const body = response.json() as { message?: string }
            t.equal(response.statusCode, 400, `${method.toUpperCase()} ${url}: 400`)
            t.match(body.message, new RegExp(`^${part}/${parameter.name} `), `${method.toUpperCase()} ${url}: names ${part}/${parameter.name}`)
          }
        }
      }
    }
    t.ok(tested.some((entry) => entry.endsWith('path version')), 'a path parameter (a history version) is among them')
    t.ok(tested.some((entry) => entry.endsWith('query skip')), 'a query parameter (skip) is among them')
    t.comment(`${tested.length} parameters`)
    t.equal(await databaseDigest(app), before, 'nothing changed')
    await assertStillServing(t, app)
  })
}
