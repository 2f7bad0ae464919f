type Schema = Record<string, unknown>

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The property every branch requires and fixes to its own constant, if there is one. */
function discriminator (branches: Schema[]): string | undefined {
  const [first] = branches
  if (first === undefined || !isSchema(first.properties)) return undefined
  return Object.keys(first.properties).find((key) => {
    const values = branches.map((branch) => {
      const property = isSchema(branch.properties) ? branch.properties[key] : undefined
      const required = Array.isArray(branch.required) && branch.required.includes(key)
      return required && isSchema(property) && 'const' in property ? property.const : undefined
    })
    return values.every((v) => v !== undefined) && new Set(values).size === values.length
  })
}

// anyOf [a, b, c] told apart by `key`: if key = a's constant then a, else if key = b's then b, else c.
function chain (branches: Schema[], key: string): Schema {
  const [branch, ...rest] = branches
  if (branch === undefined) return {}
  if (rest.length === 0) return branch
  const properties = branch.properties as Schema
  const constant = (properties[key] as Schema).const
  return { if: { type: 'object', properties: { [key]: { const: constant } }, required: [key] }, then: branch, else: chain(rest, key) }
}

/**
 * A copy of a JSON schema in which each `anyOf` of objects told apart by one required constant
 * property (such as `{type: "folder", ...} | {type: "component", ...}`) is written as
 * if/then/else on that property. Both accept exactly the same values. A serializer needs the
 * branch a value belongs to: with anyOf it validates the value against each branch in turn (every
 * length and pattern of it), with if/then/else it compares one property. The API's documents keep
 * anyOf, which OpenAPI 3.0 can express and if/then/else it cannot.
 */
export function withDiscriminatedUnions (schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withDiscriminatedUnions)
  if (!isSchema(schema)) return schema
  const copy: Schema = {}
  for (const [key, value] of Object.entries(schema)) copy[key] = withDiscriminatedUnions(value)
  const branches = copy.anyOf
  if (!Array.isArray(branches) || branches.length < 2 || !branches.every(isSchema) || 'if' in copy) return copy
  const key = discriminator(branches)
  if (key === undefined) return copy
  const { anyOf: _, ...siblings } = copy
  return { ...siblings, ...chain(branches, key) }
}
