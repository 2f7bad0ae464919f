import t from 'tap'
import fc from 'fast-check'
import { JsonChecker, MAX_JSON_DEPTH } from '../../../lib/orchestrator/json-check.js'
import { propertyRuns } from '../../helpers/property-runs.js'

// The verdict on `bytes` fed in the pieces that `cuts` (offsets) make.
function check (bytes: Buffer, cuts: number[] = [], maxDepth?: number): string | undefined {
  const checker = new JsonChecker(maxDepth)
  let from = 0
  for (const cut of [...cuts.filter((c) => c > 0 && c < bytes.length)].sort((a, b) => a - b)) {
    const problem = checker.write(bytes.subarray(from, cut))
    if (problem !== undefined) return problem
    from = cut
  }
  return checker.write(bytes.subarray(from)) ?? checker.end()
}

const parses = (text: string): boolean => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

const deep = (depth: number, open = '[', close = ']'): string => open.repeat(depth) + close.repeat(depth)

t.test('valid documents, whatever the chunking', async (t) => {
  await fc.assert(fc.property(fc.json({ maxDepth: 8 }), fc.array(fc.nat(2000)), (text, cuts) => {
    const bytes = Buffer.from(text)
    return check(bytes, cuts) === undefined
  }), { numRuns: propertyRuns(100) })
  for (const text of ['0', '-0', '1.5e+10', '-12.25E-3', 'true', 'false', 'null', '"é\\u00e9\\n"', ' [ ] ', '{ }', '{"a":[1,{"b":null}],"c":"\\""}\n', '"\ud83d\ude00"']) {
    t.equal(check(Buffer.from(text)), undefined, text)
    for (let cut = 1; cut < Buffer.byteLength(text); cut++) t.equal(check(Buffer.from(text), [cut]), undefined, `${text} cut at ${cut}`)
  }
})

t.test('the same verdict as JSON.parse on text made of JSON\'s own characters', async () => {
  const alphabet = fc.constantFrom(...'{}[]:,"\\ 0123-+.eEtrufalsn\nx/ub\t'.split(''))
  await fc.assert(fc.property(fc.array(alphabet, { maxLength: 30 }).map((cs) => cs.join('')), fc.array(fc.nat(30)), (text, cuts) => {
    return (check(Buffer.from(text), cuts) === undefined) === parses(text)
  }), { numRuns: propertyRuns(1000) })
  // Mutations of valid documents (strings of any Unicode characters, so multi-byte UTF-8 too):
  // one character changed, dropped or inserted, the bytes split into random chunks.
  const json = fc.oneof(fc.json({ maxDepth: 4 }), fc.json({ maxDepth: 4, stringUnit: 'grapheme' }))
  await fc.assert(fc.property(json, fc.nat(), fc.constantFrom(...'{}[]:,"\\ 0-.eE+\u0001xé'.split('')), fc.constantFrom('replace', 'drop', 'insert', 'none'), fc.array(fc.nat(300)), (json, at, c, how, cuts) => {
    const i = json.length === 0 ? 0 : at % json.length
    const text = how === 'replace' ? json.slice(0, i) + c + json.slice(i + 1) : how === 'drop' ? json.slice(0, i) + json.slice(i + 1) : how === 'insert' ? json.slice(0, i) + c + json.slice(i) : json
    return (check(Buffer.from(text), cuts) === undefined) === parses(text)
  }), { numRuns: propertyRuns(1000) })
})

t.test('invalid documents say why and where', async (t) => {
  const cases: Array<[string | Buffer, RegExp]> = [
    ['', /^no JSON value at all$/],
    ['   ', /^no JSON value at all$/],
    ['{"a":1', /ends before it is complete at byte 6/],
    ['{"a":1}}', /unexpected '}' after the document at byte 7/],
    ['[1,]', /unexpected '\]' at byte 3/],
    ['{"a" 1}', /':' was expected at byte 5/],
    ['{1:2}', /member name was expected at byte 1/],
    ['01', /leading zero at byte 1/],
    ['1.', /ends before it is complete/],
    ['-', /ends before it is complete/],
    ['"a\u0001"', /control character inside a string at byte 2/],
    ['"\\x"', /invalid escape in a string at byte 2/],
    ['"\\u12g4"', /invalid \\u escape in a string at byte 5/],
    ['tru', /ends before it is complete/],
    ['nul1', /unexpected '1' at byte 3/],
    ['{"a":1}{"b":2}', /after the document at byte 7/],
    [Buffer.from([0x22, 0xff, 0x22]), /bytes that are not UTF-8/],
    [Buffer.from([0x22, 0xc0, 0x80, 0x22]), /bytes that are not UTF-8/],
    [Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]), /bytes that are not UTF-8/],
    [Buffer.from([0x22, 0xf4, 0x90, 0x80, 0x80, 0x22]), /bytes that are not UTF-8/],
    [Buffer.from([0x22, 0xe2, 0x82, 0x22]), /bytes that are not UTF-8/],
    [Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), /unexpected byte 0xef at byte 0/]
  ]
  for (const [text, reason] of cases) {
    const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text)
    t.match(check(bytes), reason, JSON.stringify(text.toString()))
    // Every split gives the same verdict.
    for (let cut = 1; cut < bytes.length; cut++) t.match(check(bytes, [cut]), reason, `${JSON.stringify(text.toString())} cut at ${cut}`)
  }
  const checker = new JsonChecker()
  t.ok(checker.write(Buffer.from('[}')) !== undefined)
  t.equal(checker.write(Buffer.from('[]')), checker.end(), 'the first problem sticks')
})

t.test('nesting beyond the limit is refused, at the limit accepted', async (t) => {
  t.equal(check(Buffer.from(deep(MAX_JSON_DEPTH))), undefined)
  t.equal(check(Buffer.from('{"a":'.repeat(MAX_JSON_DEPTH - 1) + '{}' + '}'.repeat(MAX_JSON_DEPTH - 1))), undefined)
  t.match(check(Buffer.from(deep(MAX_JSON_DEPTH + 1))), new RegExp(`nesting deeper than ${MAX_JSON_DEPTH} levels at byte ${MAX_JSON_DEPTH}`))
  t.match(check(Buffer.from('{"a":'.repeat(3) + '1' + '}'.repeat(3)), [], 2), /nesting deeper than 2 levels at byte 10/)
  t.match(check(Buffer.from(deep(100_000))), /nesting deeper/, 'far too deep: refused, no stack used')
})
