// Checks that bytes arriving in chunks form one JSON text (RFC 8259, UTF-8), without building
// any value: the relay embeds an orchestrator's JSON answer in its own reply as bytes, and must
// know it is JSON a client can parse, at a cost close to reading it once.

import { isUtf8 } from 'node:buffer'

// Deep enough for any YANG document; shallow enough for every client's parser (Python's json
// stops near 1,000 levels, JSON.stringify overflows the stack somewhat further).
export const MAX_JSON_DEPTH = 512

// What is expected next.
const VALUE = 0 // a value (document start, after ':' or after ',' in an array)
const VALUE_OR_CLOSE = 1 // after '['
const KEY_OR_CLOSE = 2 // after '{'
const KEY = 3 // after ',' in an object
const COLON = 4
const AFTER = 5 // after a value: ',', a closing bracket, or (at depth 0) only whitespace
const STRING = 6
const ESCAPE = 7
const UNICODE = 8
const MINUS = 10
const ZERO = 11
const INT = 12
const DOT = 13
const FRAC = 14
const EXP_MARK = 15
const EXP_SIGN = 16
const EXP = 17
const LITERAL = 18
const FAILED = 19

const ARRAY = 1
const OBJECT = 2

const TRUE = Buffer.from('true')
const FALSE = Buffer.from('false')
const NULL = Buffer.from('null')

// Bytes that go on a string as they are: anything but '"', '\\' and control characters (UTF-8
// sequences are checked apart, natively, on whole chunks).
const PLAIN = new Uint8Array(256).fill(1)
for (let b = 0; b < 0x20; b++) PLAIN[b] = 0
PLAIN[0x22] = 0
PLAIN[0x5c] = 0

// Length of the UTF-8 sequence a lead byte starts (1 for ASCII and stray bytes, which the native
// check then refuses).
const sequenceLength = (b: number): number => b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1

const isWhitespace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39
const isHex = (c: number): boolean => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)

/**
 * Feed it with `write(chunk)`, then `end()`; each returns undefined while the text is valid, else
 * why it is not (the first problem, with its byte offset). Memory: one byte per open level.
 */
export class JsonChecker {
  readonly #maxDepth: number
  readonly #stack: Uint8Array
  #depth = 0
  #state = VALUE
  #inKey = false
  #hexLeft = 0
  // The start of a UTF-8 sequence the last chunk ended in.
  #utf8Tail: Buffer | undefined
  #literal: Buffer = TRUE
  #literalAt = 0
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
    if (!this.#utf8(chunk)) return this.#fail('bytes that are not UTF-8', 0)
    const length = chunk.length
    // State in locals while the loop runs (written back below): much faster than fields.
    let state = this.#state
    let depth = this.#depth
    const stack = this.#stack
    let i = 0
    while (i < length) {
      const c = chunk[i] as number
      switch (state) {
        case STRING: {
          // The common case, plain ASCII inside a string, in a loop of its own.
          let j = i
          let b = c
          while (PLAIN[b] === 1) {
            if (++j === length) break
            b = chunk[j] as number
          }
          if (j === length) {
            i = j
            break
          }
          i = j
          if (b === 0x22) {
            if (this.#inKey) state = COLON
            else state = AFTER
          } else if (b === 0x5c) {
            state = ESCAPE
          } else {
            return this.#fail('a control character inside a string', i)
          }
          i++
          break
        }
        case VALUE:
        case VALUE_OR_CLOSE:
          if (isWhitespace(c)) { i++; break }
          if (c === 0x5d && state === VALUE_OR_CLOSE) {
            depth--
            state = AFTER
            i++
            break
          }
          this.#state = state
          this.#depth = depth
          if (!this.#startValue(c, i)) return this.#fail(`an unexpected ${describe(c)}`, i)
          if (this.#problem !== undefined) return this.#problem
          state = this.#state
          depth = this.#depth
          i++
          break
        case KEY_OR_CLOSE:
        case KEY:
          if (isWhitespace(c)) { i++; break }
          if (c === 0x22) {
            this.#inKey = true
            state = STRING
          } else if (c === 0x7d && state === KEY_OR_CLOSE) {
            depth--
            state = AFTER
          } else {
            return this.#fail(`an unexpected ${describe(c)} where a member name was expected`, i)
          }
          i++
          break
        case COLON:
          if (isWhitespace(c)) { i++; break }
          if (c !== 0x3a) return this.#fail(`an unexpected ${describe(c)} where ':' was expected`, i)
          state = VALUE
          i++
          break
        case AFTER:
          if (isWhitespace(c)) { i++; break }
          if (depth === 0) return this.#fail(`an unexpected ${describe(c)} after the document`, i)
          if (c === 0x2c) {
            state = stack[depth - 1] === ARRAY ? VALUE : KEY
          } else if (c === 0x5d && stack[depth - 1] === ARRAY) {
            depth--
            state = AFTER
          } else if (c === 0x7d && stack[depth - 1] === OBJECT) {
            depth--
            state = AFTER
          } else {
            return this.#fail(`an unexpected ${describe(c)}`, i)
          }
          i++
          break
        case ESCAPE:
          if (c === 0x75) {
            state = UNICODE
            this.#hexLeft = 4
          } else if (c === 0x22 || c === 0x5c || c === 0x2f || c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74) {
            state = STRING
          } else {
            return this.#fail('an invalid escape in a string', i)
          }
          i++
          break
        case UNICODE:
          if (!isHex(c)) return this.#fail('an invalid \\u escape in a string', i)
          if (--this.#hexLeft === 0) state = STRING
          i++
          break
        case MINUS:
          if (c === 0x30) state = ZERO
          else if (isDigit(c)) state = INT
          else return this.#fail('a malformed number', i)
          i++
          break
        case ZERO:
        case INT:
          if (isDigit(c) && state === INT) { i++; break }
          if (c === 0x2e) { state = DOT; i++; break }
          if (c === 0x65 || c === 0x45) { state = EXP_MARK; i++; break }
          if (isDigit(c)) return this.#fail('a number with a leading zero', i)
          state = AFTER // the byte ends the number and is read again
          break
        case DOT:
          if (!isDigit(c)) return this.#fail('a malformed number', i)
          state = FRAC
          i++
          break
        case FRAC:
          if (isDigit(c)) { i++; break }
          if (c === 0x65 || c === 0x45) { state = EXP_MARK; i++; break }
          state = AFTER
          break
        case EXP_MARK:
          if (c === 0x2b || c === 0x2d) state = EXP_SIGN
          else if (isDigit(c)) state = EXP
          else return this.#fail('a malformed number', i)
          i++
          break
        case EXP_SIGN:
          if (!isDigit(c)) return this.#fail('a malformed number', i)
          state = EXP
          i++
          break
        case EXP:
          if (isDigit(c)) { i++; break }
          state = AFTER
          break
        case LITERAL:
          if (c !== this.#literal[this.#literalAt]) return this.#fail(`an unexpected ${describe(c)}`, i)
          if (++this.#literalAt === this.#literal.length) state = AFTER
          i++
          break
        default:
          return this.#problem
      }
    }
    this.#state = state
    this.#depth = depth
    this.#offset += length
    return undefined
  }

  /** Whether what was written is one complete JSON text. */
  end (): string | undefined {
    if (this.#problem !== undefined) return this.#problem
    if (this.#utf8Tail !== undefined) return this.#fail('bytes that are not UTF-8', 0)
    const state = this.#state
    if (this.#depth === 0 && (state === AFTER || state === ZERO || state === INT || state === FRAC || state === EXP)) return undefined
    if (state === VALUE && this.#depth === 0) {
      this.#state = FAILED
      this.#problem = 'no JSON value at all'
      return this.#problem
    }
    return this.#fail('the document ends before it is complete', 0)
  }

  #startValue (c: number, at: number): boolean {
    switch (c) {
      case 0x7b: // {
      case 0x5b: // [
        if (this.#depth === this.#maxDepth) {
          this.#fail(`nesting deeper than ${this.#maxDepth} levels`, at)
          return true
        }
        this.#stack[this.#depth++] = c === 0x7b ? OBJECT : ARRAY
        this.#state = c === 0x7b ? KEY_OR_CLOSE : VALUE_OR_CLOSE
        return true
      case 0x22:
        this.#inKey = false
        this.#state = STRING
        return true
      case 0x2d:
        this.#state = MINUS
        return true
      case 0x74:
      case 0x66:
      case 0x6e:
        this.#literal = c === 0x74 ? TRUE : c === 0x66 ? FALSE : NULL
        this.#literalAt = 1
        this.#state = LITERAL
        return true
      default:
        if (c === 0x30) this.#state = ZERO
        else if (isDigit(c)) this.#state = INT
        else return false
        return true
    }
  }

  // Whether the chunk continues valid UTF-8 (checked natively; outside strings only ASCII is
  // valid JSON anyway, which the byte loop checks). A sequence cut by the chunk's end waits for
  // the next chunk.
  #utf8 (chunk: Uint8Array): boolean {
    let from = 0
    const tail = this.#utf8Tail
    if (tail !== undefined) {
      const want = sequenceLength(tail[0] as number)
      const piece = Buffer.concat([tail, chunk.subarray(0, want - tail.length)])
      if (piece.length < want) {
        this.#utf8Tail = piece
        return true
      }
      if (!isUtf8(piece)) return false
      this.#utf8Tail = undefined
      from = want - tail.length
    }
    let to = chunk.length
    for (let k = 1; k <= 3 && to - k >= from; k++) {
      const b = chunk[to - k] as number
      if ((b & 0xc0) === 0x80) continue
      if (b >= 0xc0 && sequenceLength(b) > k) to -= k
      break
    }
    if (to < chunk.length) this.#utf8Tail = Buffer.from(chunk.subarray(to))
    return isUtf8(chunk.subarray(from, to))
  }

  #fail (what: string, at: number): string {
    this.#state = FAILED
    this.#problem ??= `${what} at byte ${this.#offset + at}`
    return this.#problem
  }
}

function describe (c: number): string {
  return c >= 0x21 && c < 0x7f ? `'${String.fromCharCode(c)}'` : `byte 0x${c.toString(16).padStart(2, '0')}`
}
