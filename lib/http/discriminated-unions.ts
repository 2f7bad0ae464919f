// Replaces, for the response serializer only, fast-json-stringify's handling of an anyOf of
// objects told apart by a constant property (component group members: folder or component).
// Validation and the OpenAPI document keep the schema as written.
// What it saves: fast-json-stringify picks an anyOf branch by validating the value against each
// branch in turn, every length and pattern of it; given if/then/else it compares one property.
// Serialising a component group of 20 members went from about 10 to about 5 us.
// What would let it go: fast-json-stringify choosing a branch by a discriminating property, or an
// OpenAPI 3.1 document (which can state if/then/else) so that the schema is written that way.
// test/lib/http/discriminated-unions.test.ts checks that both schemas accept the same values.

type Schema = Record<string, unknown>

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value)

interface Discriminator {
  key: string
  /** Each branch's constant for `key`, in branch order. */
  constants: unknown[]
}

/** The property every branch requires and fixes to a constant of its own, if there is one. */
function discriminator (branches: Schema[]): Discriminator | undefined {
  const [first] = branches
  if (first === undefined || !isSchema(first.properties)) return undefined
  for (const key of Object.keys(first.properties)) {
    const constants = branches.map((branch) => {
      const property = isSchema(branch.properties) ? branch.properties[key] : undefined
      const required = Array.isArray(branch.required) && branch.required.includes(key)
      return required && isSchema(property) && 'const' in property ? property.const : undefined
    })
    if (constants.every((v) => v !== undefined) && new Set(constants).size === constants.length) return { key, constants }
  }
  return undefined
}

// anyOf [a, b, c] told apart by `key`: if key = a's constant then a, else if key = b's then b, else c.
function chain (branches: Schema[], { key, constants }: Discriminator): Schema {
  const last = branches.at(-1) as Schema
  return branches.slice(0, -1).reduceRight<Schema>((otherwise, branch, i) => ({
    if: { type: 'object', properties: { [key]: { const: constants[i] } }, required: [key] },
    then: branch,
    else: otherwise
  }), last)
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
  const found = discriminator(branches)
  if (found === undefined) return copy
  const { anyOf: _, ...siblings } = copy
  return { ...siblings, ...chain(branches, found) }
}
