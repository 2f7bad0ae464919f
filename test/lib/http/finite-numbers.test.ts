import t from 'tap'
import { guardNumbers, numberProblem, numericFields, type Validator } from '../../../lib/http/finite-numbers.js'

t.test('the numeric fields of a schema, unions included', async (t) => {
  const schema = {
    type: 'object',
    properties: {
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      ratio: { type: 'number' },
      either: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
      name: { type: 'string' }
    }
  }
  t.same(numericFields(schema), [
    { name: 'limit', integer: true, minimum: 1, maximum: 100 },
    { name: 'ratio', integer: false },
    { name: 'either', integer: true }
  ])
  t.same(numericFields({ anyOf: [{ properties: { a: { type: ['integer', 'null'] } } }] }), [{ name: 'a', integer: true }])
  t.same(numericFields(undefined), [])
  t.same(numericFields({ type: 'object' }), [])
})

t.test('what a value past the guard is told', async (t) => {
  const bounded = { name: 'v', integer: true, minimum: 1, maximum: 10 }
  const open = { name: 'v', integer: true }
  t.equal(numberProblem(bounded, Infinity), 'must be <= 10')
  t.equal(numberProblem(bounded, -Infinity), 'must be >= 1')
  t.equal(numberProblem(open, 1e20), `must be an integer from -${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`)
  t.equal(numberProblem(open, -Infinity), `must be an integer from -${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`)
  t.equal(numberProblem({ name: 'v', integer: false }, Infinity), 'must be a finite number')
  t.equal(numberProblem({ name: 'v', integer: false }, 1e20), undefined, 'a finite number is fine')
  t.equal(numberProblem(open, Number.MAX_SAFE_INTEGER), undefined)
  t.equal(numberProblem(open, [1, Infinity]), `must be an integer from -${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`, 'array values each')
  t.equal(numberProblem(open, 'text'), undefined, 'not a number: the schema\'s own business')
})

t.test('the guard after the validator', async (t) => {
  const schema = { type: 'object', properties: { n: { type: 'integer', maximum: 5 } } }
  const passes: Validator = () => true
  passes.schemaEnv = { root: true }
  const guarded = guardNumbers(schema, passes)
  t.equal(guarded({ n: 3 }), true)
  t.equal(guarded({}), true)
  t.equal(guarded({ n: Infinity }), false)
  t.match(guarded.errors, [{ instancePath: '/n', message: 'must be <= 5' }])
  t.same(guarded.schemaEnv, { root: true }, 'Ajv\'s marker kept: Fastify passes the parent so a root may be coerced')
  const fails: Validator = () => false
  fails.errors = [{ message: 'own' }]
  const failing = guardNumbers(schema, fails)
  t.equal(failing({ n: Infinity }), false)
  t.same(failing.errors, [{ message: 'own' }], 'the validator\'s own errors first')
  t.equal(guardNumbers({ type: 'object', properties: { s: { type: 'string' } } }, passes), passes, 'nothing numeric: the validator as it is')
})
