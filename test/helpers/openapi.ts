// Checks what the service answers against its own OpenAPI document: every status a route sends
// must be listed for its operation, every JSON body must match the listed schema (Ajv over the
// document's schemas) and the headers clients rely on (ETag, X-Git-Commit, Retry-After,
// WWW-Authenticate) must be declared where they are sent.
import { Ajv, type ValidateFunction } from 'ajv'
import type { TestApp } from '../helper.js'

interface Operation { responses: Record<string, { content?: Record<string, { schema?: unknown }>, headers?: Record<string, unknown> }> }
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, unknown> }
  [key: string]: unknown
}

/** The document as a client reads it. */
export async function documentOf (app: TestApp): Promise<OpenApiDocument> {
  const response = await app.inject({ url: '/openapi.json' })
  if (response.statusCode !== 200) throw new Error(`GET /openapi.json: ${response.statusCode}`)
  return response.json()
}

const CHECKED_HEADERS = ['etag', 'x-git-commit', 'retry-after', 'www-authenticate', 'x-orchestrator-status']

export interface Exchange { method: string, url: string, statusCode: number, headers: Record<string, unknown>, body: string }

/** A checker of exchanges against `document`: a list of problems, empty when the exchange is documented. */
export function exchangeChecker (document: OpenApiDocument): (exchange: Exchange) => string[] {
  // The document's references point into itself: give its schemas a root Ajv can resolve them from.
  const text = JSON.stringify(document).replaceAll('"#/components/schemas/', '"openapi#/components/schemas/')
  const doc = JSON.parse(text) as OpenApiDocument
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false })
  ajv.addSchema({ $id: 'openapi', components: doc.components })
  const compiled = new Map<unknown, ValidateFunction>()
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    params: (template.match(/\{/g) ?? []).length,
    regex: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}|\{[^}]+\}/g, '[^/]+')}/?$`)
  })).sort((a, b) => a.params - b.params)

  return (exchange) => {
    const path = exchange.url.split('?')[0] ?? ''
    const method = exchange.method.toLowerCase()
    const found = templates.find((t) => t.regex.test(path) && doc.paths[t.template]?.[method] !== undefined)
    if (found === undefined) return [`${exchange.method} ${path}: no operation in the document`]
    const operation = doc.paths[found.template]?.[method] as Operation
    const where = `${exchange.method} ${found.template} ${exchange.statusCode}`
    const response = operation.responses[String(exchange.statusCode)]
    if (response === undefined) return [`${where}: status not in the document`]
    const problems: string[] = []
    for (const name of CHECKED_HEADERS) {
      if (exchange.headers[name] === undefined) continue
      const declared = Object.keys(response.headers ?? {}).some((h) => h.toLowerCase() === name)
      if (!declared) problems.push(`${where}: header ${name} sent, not declared`)
    }
    const type = String(exchange.headers['content-type'] ?? '')
    if (exchange.body !== '' && /json/.test(type)) {
      const schema = response.content?.['application/json']?.schema
      if (schema === undefined) {
        problems.push(`${where}: a JSON body, none declared`)
      } else {
        let validate = compiled.get(schema)
        if (validate === undefined) {
          validate = ajv.compile(schema as object)
          compiled.set(schema, validate)
        }
        if (!validate(JSON.parse(exchange.body))) problems.push(`${where}: body ${ajv.errorsText(validate.errors)}`)
      }
    }
    return problems
  }
}
