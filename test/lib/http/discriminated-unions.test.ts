import t from 'tap'
import fc from 'fast-check'
import { AjvCompiler } from '@fastify/ajv-compiler'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import { withDiscriminatedUnions } from '../../../lib/http/discriminated-unions.js'
import { ComponentGroup, Member } from '../../../schemas/component-groups.js'

type Validate = (value: unknown) => boolean
// As request bodies are validated: no coercion of types.
const compileValidator = (schema: unknown): Validate =>
  (AjvCompiler()({}, { customOptions: { strict: false, coerceTypes: false } }) as unknown as (route: { schema: unknown }) => Validate)({ schema })

t.test('a union of objects told apart by a required constant becomes if/then/else on it', async (t) => {
  const union = {
    description: 'kept',
    anyOf: [
      { type: 'object', required: ['kind', 'a'], properties: { kind: { const: 'x' }, a: { type: 'string' } } },
      { type: 'object', required: ['kind'], properties: { kind: { const: 'y' } } },
      { type: 'object', required: ['kind', 'c'], properties: { kind: { const: 'z' }, c: { type: 'number' } } }
    ]
  }
  const [x, y, z] = union.anyOf
  t.same(withDiscriminatedUnions({ type: 'array', items: union }), {
    type: 'array',
    items: {
      description: 'kept',
      if: { type: 'object', properties: { kind: { const: 'x' } }, required: ['kind'] },
      then: x,
      else: { if: { type: 'object', properties: { kind: { const: 'y' } }, required: ['kind'] }, then: y, else: z }
    }
  })
  t.same(union.anyOf.length, 3, 'the schema given is left as it was')
})

t.test('other unions are copied unchanged', async (t) => {
  const cases = [
    { anyOf: [{ type: 'string' }, { type: 'number' }] },
    { anyOf: [{ type: 'object', properties: { k: { const: 1 } } }, { type: 'object', required: ['k'], properties: { k: { const: 2 } } }] },
    { anyOf: [{ type: 'object', required: ['k'], properties: { k: { const: 1 } } }, { type: 'object', required: ['k'], properties: { k: { const: 1 } } }] },
    { anyOf: [{ type: 'object', required: ['k'], properties: { k: { const: 1 } } }] },
    { anyOf: [{ type: 'object', required: ['k'], properties: { k: { const: 1 } } }, { type: 'object', required: ['k'], properties: { k: { const: 2 } } }], if: {} },
    { anyOf: [{ type: 'object', required: ['k'], properties: { k: { type: 'string' } } }, { type: 'object', required: ['k'], properties: { k: { const: 2 } } }] },
    { anyOf: [true, { type: 'object' }] },
    { anyOf: [{ type: 'object', required: ['k'] }, { type: 'object', required: ['k'] }] }
  ]
  for (const schema of cases) t.same(withDiscriminatedUnions(schema), schema, JSON.stringify(schema))
})

t.test('component group members: the rewritten schema accepts exactly what the union accepts', async (t) => {
  const union = compileValidator(Member)
  const rewritten = compileValidator(withDiscriminatedUnions(Member))
  const segment = fc.oneof(fc.string({ maxLength: 6 }), fc.string({ minLength: 250, maxLength: 260 }))
  const member = fc.record({
    type: fc.constantFrom('folder', 'component', 'other', 1),
    path: fc.oneof(fc.array(segment, { maxLength: 3 }), segment, fc.integer()),
    sourceCollection: fc.string({ maxLength: 3 }),
    ref: fc.string({ maxLength: 3 }),
    extra: fc.string()
  }, { requiredKeys: [] })
  fc.assert(fc.property(member, (value) => union(value) === rewritten(value)), { numRuns: 2000 })
  t.ok(rewritten({ type: 'folder', path: ['a'] }))
  t.ok(rewritten({ type: 'component', path: '/a', sourceCollection: 's', ref: 'r' }))
  t.notOk(rewritten({ type: 'component', path: ['a'], sourceCollection: 's', ref: 'r' }))
})

t.test('a component group is serialised the same from either schema', async (t) => {
  const compile = SerializerSelector()({}, {})
  const route = { method: 'GET', url: '/', httpStatus: '200' }
  const fromUnion = compile({ ...route, schema: ComponentGroup })
  const fromRewritten = compile({ ...route, schema: withDiscriminatedUnions(ComponentGroup) })
  const doc = {
    _id: '5f1c00000000000000000001',
    name: 'core',
    description: '',
    version: 2,
    gbacRead: [],
    gbacWrite: [],
    meta: { a: 1 },
    members: [{ path: ['a', 'b'], type: 'folder' }, { path: '/a/b', type: 'component', sourceCollection: 's', ref: 'r' }]
  }
  t.equal(fromRewritten(doc), fromUnion(doc))
  t.same(JSON.parse(fromRewritten(doc)), doc)
})
