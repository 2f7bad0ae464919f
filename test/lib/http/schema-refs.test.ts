import t from 'tap'
import { referencedSchemas } from '../../../lib/http/schema-refs.js'

const shared = {
  ErrorResponse: { $id: 'ErrorResponse', type: 'object' },
  Member: { $id: 'Member', type: 'object', properties: { meta: { $ref: 'Meta#' } } },
  Meta: { $id: 'Meta', type: 'object' },
  Group: { $id: 'Group', type: 'object', properties: { members: { type: 'array', items: { $ref: 'Member' } } } },
  Unused: { $id: 'Unused', type: 'string' },
  Cycle: { $id: 'Cycle', type: 'object', properties: { next: { $ref: 'Cycle#' } } }
}

t.test('a schema with no reference needs no shared schema', async (t) => {
  t.same(referencedSchemas({ type: 'object', properties: { a: { type: 'string' } } }, shared), {})
})

t.test('references are followed through the shared schemas, and only those reached are given', async (t) => {
  const page = { type: 'object', properties: { items: { type: 'array', items: { $ref: 'Group' } } } }
  t.same(Object.keys(referencedSchemas(page, shared)).sort(), ['Group', 'Member', 'Meta'])
})

t.test('a reference inside anyOf, with a JSON pointer, or to itself', async (t) => {
  const schema = { anyOf: [{ $ref: 'ErrorResponse#/properties/message' }, { $ref: 'Cycle' }] }
  t.same(Object.keys(referencedSchemas(schema, shared)).sort(), ['Cycle', 'ErrorResponse'])
})

t.test('local references and unknown ids are left to the serialiser', async (t) => {
  t.same(referencedSchemas({ $ref: '#/definitions/x', definitions: { x: { $ref: 'Nowhere' } } }, shared), {})
})
