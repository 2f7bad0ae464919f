import t from 'tap'
import fc from 'fast-check'
import { describePath, findJsonTextProblem, findNulCharacter, isSafeNumberLiteral } from '../../../lib/http/json-text.js'
import { jsonBytes, jsonDepth } from '../../../lib/http/free-form.js'
import { propertyRuns } from '../../helpers/property-runs.js'

const safeJson = fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.parse(JSON.stringify(v, (_k, x: unknown) =>
  typeof x === 'number' && Math.abs(x) > Number.MAX_SAFE_INTEGER ? 1 : x)) as unknown)

t.test('JSON that JSON.stringify writes has no problem when its numbers are safe and it is shallow enough', async (t) => {
  fc.assert(fc.property(safeJson, fc.boolean(), (value, pretty) => {
    const text = JSON.stringify(value, null, pretty ? 2 : undefined)
    return findJsonTextProblem(text, 100) === undefined
  }), { numRuns: propertyRuns(100) })
  t.pass()
})

t.test('depth is counted as jsonDepth counts it', async (t) => {
  fc.assert(fc.property(safeJson, (value) => {
    const text = JSON.stringify(value)
    const depth = jsonDepth(value)
    const atLimit = findJsonTextProblem(text, Math.max(depth, 1))
    const below = depth > 0 ? findJsonTextProblem(text, depth - 1) : undefined
    return atLimit === undefined && (depth === 0 || below?.kind === 'too-deep')
  }), { numRuns: propertyRuns(60) })
  t.equal(jsonBytes({ a: 'é' }), 10)
})

t.test('a key given twice is found at its path, however it is escaped', async (t) => {
  t.same(findJsonTextProblem('{"a":1,"a":2}'), { kind: 'duplicate-key', path: ['a'] })
  t.same(findJsonTextProblem('{"\\u0061":1,"a":2}'), { kind: 'duplicate-key', path: ['a'] })
  t.same(findJsonTextProblem('{"x":[0,{"b":"a:","b":1}]}'), { kind: 'duplicate-key', path: ['x', '1', 'b'] })
  t.equal(findJsonTextProblem('{"a":{"b":1},"b":{"a":2}}'), undefined, 'the same key in two objects is fine')
  // An object's keys are kept in a list while few, then in a set: a duplicate is found either way.
  for (const keys of [2, 16, 17, 40]) {
    const names = Array.from({ length: keys }, (_, i) => `k${i}`)
    const object = (extra: string[]) => `{${[...names, ...extra].map((k, i) => `"${k}":${i}`).join(',')}}`
    t.equal(findJsonTextProblem(object([])), undefined, `${keys} distinct keys`)
    for (const again of [names[0] as string, names[keys - 1] as string]) {
      t.same(findJsonTextProblem(`[${object([again])}]`), { kind: 'duplicate-key', path: ['0', again] }, `${keys} keys, then ${again} again`)
    }
  }
})

t.test('numbers beyond 2^53 - 1 are found, in any notation', async (t) => {
  for (const literal of ['9007199254740992', '-9007199254740993', '1e16', '1E400', '123456789012345678.5']) {
    t.equal(isSafeNumberLiteral(literal), false, literal)
    t.match(findJsonTextProblem(`{"m":[${literal}]}`), { kind: 'unsafe-number', path: ['m', '0'], literal })
  }
  for (const literal of ['9007199254740991', '-9007199254740991', '0.1', '1e15', '-0', '5e-324']) t.equal(isSafeNumberLiteral(literal), true, literal)
})

t.test('invalid JSON is left to the parser', async (t) => {
  for (const text of ['{', '"', '{"a"', '[1,', 'nul', '{"a":"\\x"}', '-']) t.equal(findJsonTextProblem(text), undefined, text)
})

t.test('NUL characters are found in values and keys', async (t) => {
  t.same(findNulCharacter({ a: [1, { b: 'x\u0000' }] }), ['a', '1', 'b'])
  t.same(findNulCharacter({ 'k\u0000': 1 }), ['k\u0000'])
  t.same(findNulCharacter('\u0000'), [])
  t.equal(findNulCharacter({ a: ['fine'], b: null, c: 1 }), undefined)
  t.equal(describePath('body', ['k\u0000', 'x'.repeat(50)]), `body/k?/${'x'.repeat(40)}...`)
  t.equal(describePath('body', Array.from({ length: 10 }, () => 'k')), 'body/k/k/k/k/k/k/k/k/...')
})
