import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import t from 'tap'
import fc from 'fast-check'
import { JsonChecker, MAX_JSON_DEPTH, ScalarJsonChecker, SIMD_JSON_CHECK } from '../../../lib/orchestrator/json-check.js'
import { JSON_CHECK_SOURCE_SHA256, JSON_CHECK_WASM } from '../../../lib/orchestrator/json-check-wasm.js'

interface Verdict {
  problem: string | undefined
  // Where the WebAssembly check stopped, when it found the problem.
  refusedAt?: number | undefined
}

// The verdict of a checker on `bytes` fed in the pieces that `cuts` (offsets) make.
function verdict (checker: JsonChecker | ScalarJsonChecker, bytes: Buffer, cuts: number[]): Verdict {
  let from = 0
  let problem: string | undefined
  for (const cut of [...cuts.filter((c) => c > 0 && c < bytes.length), bytes.length].sort((a, b) => a - b)) {
    problem = checker.write(bytes.subarray(from, cut))
    if (problem !== undefined) break
    from = cut
  }
  problem ??= checker.end()
  return checker instanceof JsonChecker ? { problem, refusedAt: checker.refusedAt } : { problem }
}

const parses = (bytes: Buffer): boolean => {
  try {
    JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
    return true
  } catch {
    return false
  }
}

// Both checkers give the same verdict, word for word; the WebAssembly check stops at the byte
// the message names (problems it finds itself: not UTF-8 and the end of the text are the
// wrapper's); and JSON.parse agrees on validity (but for the nesting limit).
function agree (bytes: Buffer, cuts: number[], maxDepth?: number): boolean {
  const simd = verdict(new JsonChecker(maxDepth), bytes, cuts)
  const scalar = verdict(new ScalarJsonChecker(maxDepth), bytes, cuts)
  if (simd.problem !== scalar.problem) throw new Error(`${JSON.stringify(bytes.toString())} ${JSON.stringify(cuts)}: ${simd.problem} / ${scalar.problem}`)
  const offset = /at byte (\d+)$/.exec(simd.problem ?? '')?.[1]
  const kernelProblem = simd.problem !== undefined && !/not UTF-8|ends before|no JSON value/.test(simd.problem)
  if (kernelProblem ? simd.refusedAt !== Number(offset) : simd.refusedAt !== undefined) {
    throw new Error(`${JSON.stringify(bytes.toString())} ${JSON.stringify(cuts)}: ${simd.problem}, refused at ${simd.refusedAt}`)
  }
  return maxDepth !== undefined || /nesting deeper/.test(simd.problem ?? '') || (simd.problem === undefined) === parses(bytes)
}

t.test('the WebAssembly SIMD check is the one in use here', async (t) => {
  t.ok(SIMD_JSON_CHECK, 'Node has WebAssembly SIMD')
})

t.test('the module was built from the current json-check.c', async (t) => {
  const source = readFileSync(new URL('../../../lib/orchestrator/json-check.c', import.meta.url))
  t.equal(JSON_CHECK_SOURCE_SHA256, createHash('sha256').update(source).digest('hex'), 'run `npm run build:wasm` after editing json-check.c')
  t.ok(Buffer.from(JSON_CHECK_WASM, 'base64').subarray(0, 4).equals(Buffer.from('\0asm')), 'a WebAssembly module')
})

// Whitespace before a text moves it across the 64-byte blocks of the kernel.
const shifted = (text: string, shift: number): Buffer => Buffer.from(' '.repeat(shift) + text)

t.test('the same verdicts as the scalar check, the same bytes refused', async () => {
  const alphabet = fc.constantFrom(...'{}[]:,"\\ 0123-+.eEtrufalsn\nx/ub\t'.split(''))
  await fc.assert(fc.property(fc.array(alphabet, { maxLength: 150 }).map((cs) => cs.join('')), fc.nat(70), fc.array(fc.nat(220)), (text, shift, cuts) => {
    return agree(shifted(text, shift), cuts)
  }), { numRuns: 5000 })
  // Valid documents and their mutations: one character changed, dropped or inserted.
  const json = fc.oneof(fc.json({ maxDepth: 5 }), fc.json({ maxDepth: 5, stringUnit: 'grapheme' }))
  await fc.assert(fc.property(json, fc.nat(), fc.constantFrom(...'{}[]:,"\\ 0-.eE+u\u0001xé'.split('')), fc.constantFrom('replace', 'drop', 'insert', 'none'), fc.nat(70), fc.array(fc.nat(400)), (json, at, c, how, shift, cuts) => {
    const i = json.length === 0 ? 0 : at % json.length
    const text = how === 'replace' ? json.slice(0, i) + c + json.slice(i + 1) : how === 'drop' ? json.slice(0, i) + json.slice(i + 1) : how === 'insert' ? json.slice(0, i) + c + json.slice(i) : json
    return agree(shifted(text, shift), cuts)
  }), { numRuns: 5000 })
})

t.test('escapes and tokens across blocks and chunks', async () => {
  // Runs of backslashes, \u escapes, numbers and literals at every offset around the 64-byte
  // blocks' edges, whole or in pieces.
  const token = fc.constantFrom('\\\\', '\\"', '\\', '\\u00e9', '\\u12', '\\u12g4', '\\x', '"', 'a', '\u0001', 'é')
  await fc.assert(fc.property(fc.array(token, { maxLength: 40 }), fc.nat(130), fc.array(fc.nat(300)), (parts, shift, cuts) => {
    return agree(shifted(`["${parts.join('')}"]`, shift), cuts)
  }), { numRuns: 3000 })
  const scalar = fc.constantFrom('0', '-0', '12', '1.5', '1e5', '-2.5E-3', '01', '1.', '-', '1e', 'true', 'false', 'null', 'tru', 'nul1', 'truex')
  await fc.assert(fc.property(fc.array(scalar, { minLength: 1, maxLength: 12 }), fc.nat(130), fc.array(fc.nat(200)), (values, shift, cuts) => {
    return agree(shifted(`[${values.join(',')}]`, shift), cuts) && agree(shifted(values[0] as string, shift), cuts)
  }), { numRuns: 3000 })
})

t.test('documents longer than the kernel\'s input buffer, in any chunks', async (t) => {
  const long = JSON.stringify({ a: 'x\\"é'.repeat(20_000), b: Array.from({ length: 5000 }, (_, k) => [k, k / 7, null, true]) })
  for (const cuts of [[], [1], [32_768], [32_767, 65_536], [100_000, 100_001]]) {
    t.ok(agree(Buffer.from(long), cuts), `cut at ${cuts.join(', ')}`)
    // An error near the end, after many slices.
    t.ok(agree(Buffer.from(long.slice(0, -3) + ',]}'), cuts))
  }
})

t.test('nesting: the limit as the scalar check, and deeper limits than the kernel follows', async (t) => {
  const deep = (depth: number): Buffer => Buffer.from('['.repeat(depth) + ']'.repeat(depth))
  t.ok(agree(deep(MAX_JSON_DEPTH), [100]))
  t.ok(agree(deep(MAX_JSON_DEPTH + 1), [MAX_JSON_DEPTH]))
  t.ok(agree(Buffer.from('{"a":'.repeat(3) + '1' + '}'.repeat(3)), [7], 2))
  t.ok(agree(deep(1500), [700], 2000), 'deeper than the kernel\'s stack: the scalar check')
  t.equal(verdict(new JsonChecker(2000), deep(1500), []).problem, undefined)
})

t.test('the scalar check alone agrees with JSON.parse', async () => {
  const json = fc.oneof(fc.json({ maxDepth: 4 }), fc.json({ maxDepth: 4, stringUnit: 'grapheme' }))
  await fc.assert(fc.property(json, fc.nat(), fc.constantFrom(...'{}[]:,"\\ 0-.eE+\u0001xé'.split('')), fc.array(fc.nat(300)), (json, at, c, cuts) => {
    const i = json.length === 0 ? 0 : at % json.length
    const bytes = Buffer.from(json.slice(0, i) + c + json.slice(i + 1))
    return (verdict(new ScalarJsonChecker(), bytes, cuts).problem === undefined) === parses(bytes)
  }), { numRuns: 2000 })
})

t.test('checkers that take turns keep their own state', async () => {
  // One kernel instance serves every checker: chunks of three texts, interleaved, get the
  // verdicts each gets alone.
  const json = fc.oneof(fc.json({ maxDepth: 5 }), fc.constantFrom('[1,]', '{"a":"\\u12', '[[[[', '"é\\n"'))
  await fc.assert(fc.property(fc.array(fc.tuple(json, fc.array(fc.nat(200), { maxLength: 6 })), { minLength: 2, maxLength: 3 }), fc.array(fc.nat(2), { minLength: 30, maxLength: 30 }), (texts, turns) => {
    const runs = texts.map(([text, cuts]) => {
      const bytes = Buffer.from(text)
      const ends = [...cuts.filter((c) => c > 0 && c < bytes.length), bytes.length].sort((a, b) => a - b)
      return { bytes, ends, next: 0, from: 0, checker: new JsonChecker(), problem: undefined as string | undefined, alone: verdict(new JsonChecker(), bytes, cuts).problem }
    })
    const write = (run: typeof runs[number]): void => {
      const end = run.ends[run.next++] as number
      run.problem ??= run.checker.write(run.bytes.subarray(run.from, end))
      run.from = end
    }
    for (const turn of turns) {
      const run = runs[turn % runs.length]
      if (run !== undefined && run.next < run.ends.length) write(run)
    }
    return runs.every((run) => {
      while (run.next < run.ends.length) write(run)
      return (run.problem ?? run.checker.end()) === run.alone
    })
  }), { numRuns: 2000 })
})
