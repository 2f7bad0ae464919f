// Checks that bytes arriving in chunks form one JSON text (RFC 8259, UTF-8), without building
// any value: the relay embeds an orchestrator's JSON answer in its own reply as bytes, and must
// know it is JSON a client can parse. In place of JSON.parse, which would build every value
// (benchmark `orchestrator-json-check`); memory: one byte per open level.
// Over 300 lines: a table-driven automaton, whose transition table is built here state by state.
//
// One lookup in a transition table per byte, the place of a value (top level, array, object)
// being part of the state, so that only '{', '[' and the closing brackets touch the nesting
// stack, and a number's end is its next byte, read once. UTF-8 is checked natively (isUtf8) on
// each chunk. Messages are worked out only when a byte does not fit, from the state and that byte.

import { isUtf8 } from 'node:buffer'

// Deep enough for any YANG document; shallow enough for every client's parser (Python's json
// stops near 1,000 levels, JSON.stringify overflows the stack somewhat further).
export const MAX_JSON_DEPTH = 512

// Where a value sits, which decides what may follow it.
const TOP = 0
const IN_ARRAY = 1
const IN_OBJECT = 2
type Place = typeof TOP | typeof IN_ARRAY | typeof IN_OBJECT
const PLACES: Place[] = [TOP, IN_ARRAY, IN_OBJECT]

// What a state expects, for the message when a byte does not fit.
type Kind = 'string' | 'escape' | 'hex' | 'value' | 'member' | 'colon' | 'after' | 'malformed-number' | 'zero' | 'number' | 'literal'

const kindOf: Kind[] = []
const placeOf: Place[] = []
const newState = (kind: Kind, place: Place): number => {
  kindOf.push(kind)
  placeOf.push(place)
  return kindOf.length - 1
}

// Inside a string (the states numbered first, so `state <= LAST_STRING` tells them): a value at
// each place, then a member name.
const STRING = PLACES.map((p) => newState('string', p))
const MEMBER_STRING = newState('string', IN_OBJECT)
const LAST_STRING = MEMBER_STRING
const VALUE = PLACES.map((p) => newState('value', p)) // document start, after ':', after ',' in an array
const VALUE_OR_CLOSE = newState('value', IN_ARRAY) // after '['
const MEMBER_OR_CLOSE = newState('member', IN_OBJECT) // after '{'
const MEMBER = newState('member', IN_OBJECT) // after ',' in an object
const COLON = newState('colon', IN_OBJECT)
const AFTER = PLACES.map((p) => newState('after', p)) // after a value
const ESCAPE = [...STRING, MEMBER_STRING].map((s) => newState('escape', placeOf[s] as Place))
const HEX = [...STRING, MEMBER_STRING].map((s) => [1, 2, 3, 4].map(() => newState('hex', placeOf[s] as Place)))
const MINUS = PLACES.map((p) => newState('malformed-number', p))
const ZERO = PLACES.map((p) => newState('zero', p))
const INT = PLACES.map((p) => newState('number', p))
const DOT = PLACES.map((p) => newState('malformed-number', p))
const FRACTION = PLACES.map((p) => newState('number', p))
const EXP_MARK = PLACES.map((p) => newState('malformed-number', p))
const EXP_SIGN = PLACES.map((p) => newState('malformed-number', p))
const EXPONENT = PLACES.map((p) => newState('number', p))
const LITERALS = ['true', 'false', 'null']
// LITERAL[place][k][n]: literal k, its first n + 1 bytes read.
const LITERAL = PLACES.map((p) => LITERALS.map((word) => [...word.slice(1)].map(() => newState('literal', p))))

// Not states: what the loop does apart from moving to the next state.
const PUSH_OBJECT = 0xf0
const PUSH_ARRAY = 0xf1
const POP = 0xf2
const ERROR = 0xff
if (kindOf.length > PUSH_OBJECT) throw new Error('too many states for the table')

const TABLE = new Uint8Array(kindOf.length * 256).fill(ERROR)
const set = (state: number, bytes: Iterable<number>, next: number): void => {
  for (const b of bytes) TABLE[state * 256 + b] = next
}
const code = (chars: string): number[] => [...chars].map((c) => c.charCodeAt(0))
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, k) => from + k)
const WHITESPACE = code(' \n\r\t')
const DIGITS = code('0123456789')
const HEX_DIGITS = code('0123456789abcdefABCDEF')

for (const p of PLACES) {
  const value = VALUE[p] as number
  const after = AFTER[p] as number
  const starts = (state: number): void => {
    set(state, WHITESPACE, state)
    set(state, code('{'), PUSH_OBJECT)
    set(state, code('['), PUSH_ARRAY)
    set(state, code('"'), STRING[p] as number)
    set(state, code('-'), MINUS[p] as number)
    set(state, code('0'), ZERO[p] as number)
    set(state, code('123456789'), INT[p] as number)
    LITERALS.forEach((word, k) => { set(state, code(word.slice(0, 1)), LITERAL[p]?.[k]?.[0] as number) })
  }
  starts(value)
  if (p === IN_ARRAY) {
    starts(VALUE_OR_CLOSE)
    set(VALUE_OR_CLOSE, code(']'), POP)
  }

  set(after, WHITESPACE, after)
  if (p === IN_ARRAY) {
    set(after, code(','), value)
    set(after, code(']'), POP)
  } else if (p === IN_OBJECT) {
    set(after, code(','), MEMBER)
    set(after, code('}'), POP)
  }

  // Numbers. Where a number may end, any byte that does not continue it is read as it would be
  // after the number.
  const endsHere = (state: number): void => {
    for (let b = 0; b < 256; b++) if (TABLE[state * 256 + b] === ERROR && !DIGITS.includes(b)) TABLE[state * 256 + b] = TABLE[after * 256 + b] as number
  }
  const int = INT[p] as number
  const fraction = FRACTION[p] as number
  const exponent = EXPONENT[p] as number
  const expMark = EXP_MARK[p] as number
  set(MINUS[p] as number, code('0'), ZERO[p] as number)
  set(MINUS[p] as number, code('123456789'), int)
  set(ZERO[p] as number, code('.'), DOT[p] as number)
  set(ZERO[p] as number, code('eE'), expMark)
  endsHere(ZERO[p] as number)
  set(int, DIGITS, int)
  set(int, code('.'), DOT[p] as number)
  set(int, code('eE'), expMark)
  endsHere(int)
  set(DOT[p] as number, DIGITS, fraction)
  set(fraction, DIGITS, fraction)
  set(fraction, code('eE'), expMark)
  endsHere(fraction)
  set(expMark, code('+-'), EXP_SIGN[p] as number)
  set(expMark, DIGITS, exponent)
  set(EXP_SIGN[p] as number, DIGITS, exponent)
  set(exponent, DIGITS, exponent)
  endsHere(exponent)

  LITERALS.forEach((word, k) => {
    const states = LITERAL[p]?.[k] ?? []
    states.forEach((state, n) => { set(state, code(word.charAt(n + 1)), states[n + 1] ?? after) })
  })
}

set(MEMBER_OR_CLOSE, WHITESPACE, MEMBER_OR_CLOSE)
set(MEMBER_OR_CLOSE, code('"'), MEMBER_STRING)
set(MEMBER_OR_CLOSE, code('}'), POP)
set(MEMBER, WHITESPACE, MEMBER)
set(MEMBER, code('"'), MEMBER_STRING)
set(COLON, WHITESPACE, COLON)
set(COLON, code(':'), VALUE[IN_OBJECT] as number)

// Strings: any byte but '"', '\\' and control characters goes on as it is (UTF-8 sequences are
// checked apart, natively, on whole chunks).
const PLAIN = new Uint8Array(256)
for (let b = 0x20; b < 256; b++) if (b !== 0x22 && b !== 0x5c) PLAIN[b] = 1
;[...STRING, MEMBER_STRING].forEach((string, k) => {
  set(string, range(0, 255).filter((b) => PLAIN[b] === 1), string)
  set(string, code('"'), string === MEMBER_STRING ? COLON : AFTER[placeOf[string] as Place] as number)
  const escape = ESCAPE[k] as number
  const hex = HEX[k] as number[]
  set(string, code('\\'), escape)
  set(escape, code('"\\/bfnrt'), string)
  set(escape, code('u'), hex[0] as number)
  hex.forEach((state, n) => { set(state, HEX_DIGITS, hex[n + 1] ?? string) })
})

// The table the loop reads: next states already multiplied by 256, so that the lookup of a byte
// in a state is one addition (the states' chain of lookups is what the loop waits on).
const SHIFTED = Uint16Array.from(TABLE, (next) => next << 8)

// States in which the text may end (at the top, after a value or within a number that is complete).
const ACCEPTING = new Set([AFTER[TOP], ZERO[TOP], INT[TOP], FRACTION[TOP], EXPONENT[TOP]])

const ARRAY = 1
const OBJECT = 2

// Length of the UTF-8 sequence a lead byte starts (1 for ASCII and stray bytes, which the native
// check then refuses).
const sequenceLength = (b: number): number => b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1

/** The UTF-8 check of a text arriving in chunks: a sequence cut by a chunk's end waits for the next. */
class Utf8Stream {
  // The start of a UTF-8 sequence the last chunk ended in.
  #tail: Buffer | undefined

  /** Whether a sequence is cut off (at the end of the text: not UTF-8). */
  get pending (): boolean {
    return this.#tail !== undefined
  }

  // Whether the chunk continues valid UTF-8 (checked natively; outside strings only ASCII is
  // valid JSON anyway, which the automaton checks).
  write (chunk: Uint8Array): boolean {
    let from = 0
    const tail = this.#tail
    if (tail !== undefined) {
      const want = sequenceLength(tail[0] as number)
      const piece = Buffer.concat([tail, chunk.subarray(0, want - tail.length)])
      if (piece.length < want) {
        this.#tail = piece
        return true
      }
      if (!isUtf8(piece)) return false
      this.#tail = undefined
      from = want - tail.length
    }
    let to = chunk.length
    for (let k = 1; k <= 3 && to - k >= from; k++) {
      const b = chunk[to - k] as number
      if ((b & 0xc0) === 0x80) continue
      if (b >= 0xc0 && sequenceLength(b) > k) to -= k
      break
    }
    if (to < chunk.length) this.#tail = Buffer.from(chunk.subarray(to))
    return isUtf8(from === 0 && to === chunk.length ? chunk : chunk.subarray(from, to))
  }
}

/**
 * Feed it with `write(chunk)`, then `end()`; each returns undefined while the text is valid, else
 * why it is not (the first problem, with its byte offset). Memory: one byte per open level.
 */
export class JsonChecker {
  readonly #maxDepth: number
  readonly #stack: Uint8Array
  #depth = 0
  #state = VALUE[TOP] as number
  readonly #utf8 = new Utf8Stream()
  #offset = 0
  #problem: string | undefined

  constructor (maxDepth = MAX_JSON_DEPTH) {
    this.#maxDepth = maxDepth
    this.#stack = new Uint8Array(maxDepth)
  }

  /** Bytes read so far. */
  get bytes (): number {
    return this.#offset
  }

  write (chunk: Uint8Array): string | undefined {
    if (this.#problem !== undefined) return this.#problem
    if (!this.#utf8.write(chunk)) return this.#fail('bytes that are not UTF-8', 0)
    const length = chunk.length
    const table = SHIFTED
    const plain = PLAIN
    const stack = this.#stack
    // State (times 256) in locals while the loop runs (written back below): much faster than fields.
    let state = this.#state << 8
    let depth = this.#depth
    for (let i = 0; i < length; i++) {
      let next = table[state + (chunk[i] as number)] as number
      if (next >= PUSH_OBJECT << 8) {
        if (next === POP << 8) {
          depth--
          next = (depth === 0 ? AFTER[TOP] as number : stack[depth - 1] === OBJECT ? AFTER[IN_OBJECT] as number : AFTER[IN_ARRAY] as number) << 8
        } else if (next === ERROR << 8) {
          return this.#fail(problemAfter(state >> 8, chunk[i] as number), i)
        } else {
          if (depth === this.#maxDepth) return this.#fail(`nesting deeper than ${this.#maxDepth} levels`, i)
          stack[depth++] = next === PUSH_OBJECT << 8 ? OBJECT : ARRAY
          next = (next === PUSH_OBJECT << 8 ? MEMBER_OR_CLOSE : VALUE_OR_CLOSE) << 8
        }
      }
      state = next
      // Inside a string, its plain bytes in a loop of their own: the lookups do not wait on each
      // other as the automaton's do.
      if (state <= LAST_STRING << 8) {
        let j = i + 1
        while (j < length && plain[chunk[j] as number] === 1) j++
        i = j - 1
      }
    }
    this.#state = state >> 8
    this.#depth = depth
    this.#offset += length
    return undefined
  }

  /** Whether what was written is one complete JSON text. */
  end (): string | undefined {
    if (this.#problem !== undefined) return this.#problem
    if (this.#utf8.pending) return this.#fail('bytes that are not UTF-8', 0)
    if (this.#depth === 0 && ACCEPTING.has(this.#state)) return undefined
    if (this.#state === VALUE[TOP]) {
      this.#problem = 'no JSON value at all'
      return this.#problem
    }
    return this.#fail('the document ends before it is complete', 0)
  }

  #fail (what: string, at: number): string {
    this.#problem ??= `${what} at byte ${this.#offset + at}`
    return this.#problem
  }
}

// Why byte `c` cannot follow in `state`.
function problemAfter (state: number, c: number): string {
  const unexpected = `an unexpected ${describe(c)}`
  switch (kindOf[state]) {
    case 'string': return 'a control character inside a string'
    case 'escape': return 'an invalid escape in a string'
    case 'hex': return 'an invalid \\u escape in a string'
    case 'malformed-number': return 'a malformed number'
    case 'member': return `${unexpected} where a member name was expected`
    case 'colon': return `${unexpected} where ':' was expected`
    case 'zero':
      if (DIGITS.includes(c)) return 'a number with a leading zero'
      return placeOf[state] === TOP ? `${unexpected} after the document` : unexpected
    case 'number':
    case 'after':
      return placeOf[state] === TOP ? `${unexpected} after the document` : unexpected
    default:
      return unexpected
  }
}

function describe (c: number): string {
  return c >= 0x21 && c < 0x7f ? `'${String.fromCharCode(c)}'` : `byte 0x${c.toString(16).padStart(2, '0')}`
}
