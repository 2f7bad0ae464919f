// The list language's schemas: the query string of a list (for validation and the OpenAPI
// document) and the page envelope of its answer. The language itself is lib/lists/grammar.ts.
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { LIST_DEFAULT_LIMIT, LIST_MAX_SET_VALUES, LIST_MAX_SKIP, type ListSpec } from '../lib/lists/grammar.js'
import { LIST_COUNT_LOOKAHEAD } from '../lib/lists/statements.js'

const VALUE_BRACKETS = '^(equals|contains|starts-with|startsWith)\\[[^\\]]{0,64}\\]$'
const SET_BRACKETS = '^(in|not-in)\\[[^\\]]{0,64}\\]$'

// A filter value or field name travels as a query parameter: never a NUL (PostgreSQL refuses
// text holding one), never unbounded.
const NO_NUL = '^[^\\u0000]*$'
const FieldName = Type.String({ minLength: 1, maxLength: 64, pattern: NO_NUL })
const FieldList = Type.String({ maxLength: 1024, pattern: NO_NUL, description: 'Comma-separated field names.' })

/** `include` and `exclude`, as GET of one document takes them. */
export const ProjectionQuery = Type.Object({
  include: Type.Optional({ ...FieldList, description: 'Only these fields (comma-separated); the id too unless exclude=<id>.' }),
  exclude: Type.Optional({ ...FieldList, description: 'All fields but these (comma-separated). With include, only the id may be excluded.' })
}, { additionalProperties: false })
export type ProjectionQuery = Static<typeof ProjectionQuery>

/** The query string of a list that only pages (its own order, no filters): limit, skip, include / exclude. */
export function pageQuerySchema (maxLimit: number) {
  return Type.Object({
    limit: Type.Integer({ minimum: 1, maximum: maxLimit, default: LIST_DEFAULT_LIMIT, description: 'Items per page.' }),
    skip: Type.Integer({ minimum: 0, maximum: LIST_MAX_SKIP, default: 0, description: 'Items before the page.' }),
    include: ProjectionQuery.properties.include,
    exclude: ProjectionQuery.properties.exclude
  }, { additionalProperties: false })
}

// The list schemas made here and the spec each serves: the OpenAPI document declares the bracket
// filters (which the schema admits as patternProperties) from it.
const LIST_SPECS = new WeakMap<object, ListSpec>()

/** The spec of a list's query string schema made by listQuerySchema (undefined for any other schema). */
export function listSpecOf (schema: unknown): ListSpec | undefined {
  return typeof schema === 'object' && schema !== null ? LIST_SPECS.get(schema) : undefined
}

/** The bracket forms of the filters (`equals[name]`...): each op, and whether it takes a list of values. */
export const BRACKET_FILTERS: ReadonlyArray<{ op: string, set: boolean, description: string }> = [
  { op: 'equals', set: false, description: 'Items whose %s equals this value exactly.' },
  { op: 'contains', set: false, description: 'Items whose %s contains this text, ignoring case.' },
  { op: 'starts-with', set: false, description: 'Items whose %s starts with this text, ignoring case.' },
  { op: 'startsWith', set: false, description: 'Same as starts-with[%s].' },
  { op: 'in', set: true, description: `Items whose %s is one of the values: repeat the parameter for each, at most ${LIST_MAX_SET_VALUES}.` },
  { op: 'not-in', set: true, description: `Items whose %s is none of the values: repeat the parameter for each, at most ${LIST_MAX_SET_VALUES}.` }
]

/** The query string of a list: its schema, for validation and the OpenAPI document. */
export function listQuerySchema (spec: ListSpec) {
  const schema = listQueryObject(spec)
  LIST_SPECS.set(schema, spec)
  return schema
}

function listQueryObject (spec: ListSpec) {
  const value = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: spec.maxValueLength, pattern: NO_NUL, description }))
  const field = (op: string) => Type.Optional({ ...FieldName, description: `The field ${op} applies to (default ${spec.defaultFilterField}): ${spec.filterable.join(', ')}.` })
  const filterValue = Type.String({ minLength: 1, maxLength: spec.maxValueLength, pattern: NO_NUL })
  const fields = spec.filterable.join(', ')
  return Type.Object({
    limit: Type.Integer({ minimum: 1, maximum: spec.maxLimit, default: LIST_DEFAULT_LIMIT, description: 'Items per page.' }),
    skip: Type.Integer({ minimum: 0, maximum: LIST_MAX_SKIP, default: 0, description: 'Items before the page.' }),
    sort: Type.String({ ...FieldName, default: spec.defaultSort, description: `The field to sort by: ${spec.sortable.join(', ')}.` }),
    order: Type.Integer({ enum: [1, -1], default: 1, description: '1: ascending, -1: descending.' }),
    include: ProjectionQuery.properties.include,
    exclude: ProjectionQuery.properties.exclude,
    equals: value('Items whose field equals this value exactly.'),
    equalsField: field('equals'),
    contains: value('Items whose field contains this text, ignoring case.'),
    containsField: field('contains'),
    startsWith: value('Items whose field starts with this text, ignoring case.'),
    'starts-with': value('Same as startsWith.'),
    startsWithField: field('startsWith')
  }, {
    additionalProperties: false,
    // Typed loosely on purpose: parseListQuery reads these keys and checks the field in brackets.
    patternProperties: {
      [VALUE_BRACKETS]: { ...filterValue, description: `equals[field], contains[field], starts-with[field] (also startsWith[field]): the filter on that field (${fields}).` },
      [SET_BRACKETS]: Type.Array(filterValue, {
        maxItems: LIST_MAX_SET_VALUES,
        description: `in[field] / not-in[field]: items whose field is (is not) one of the values; repeat the parameter for each value, at most ${LIST_MAX_SET_VALUES} (${fields}).`
      })
    }
  })
}

/** The page envelope around items of `item`'s schema, any field of which a projection may leave out. */
export function pageSchema (item: TSchema & { properties: Record<string, TSchema> }, description: string) {
  const skip = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])
  return Type.Object({
    items: Type.Array(Type.Partial(item as never), { description }),
    count: Type.Integer({ minimum: 0, description: 'Items on this page: at most `limit`, fewer when their size reached LIST_MAX_PAGE_BYTES (default 8 MiB).' }),
    skip: Type.Integer({ minimum: 0 }),
    limit: Type.Integer({ minimum: 1 }),
    total: Type.Integer({
      minimum: 0,
      description: `Items matching. Exact while fewer than skip + limit + ${LIST_COUNT_LOOKAHEAD} match; past that, ` +
        'that many (a lower bound): paging on until `next` is null reads every item, and the last page\'s total is exact.'
    }),
    end: Type.Integer({ minimum: 0, description: 'The index after the page\'s last item: skip + count.' }),
    next: { ...skip, description: 'The skip of the next page (skip + count); null on the last. Following next reads every item once.' },
    previous: { ...skip, description: 'skip - limit (at least 0); null on the first. A page cut by its size may stop before this one starts: follow next to read every item.' }
  })
}
