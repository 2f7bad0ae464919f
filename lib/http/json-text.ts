// Checks a JSON text before it is parsed, for what JSON.parse accepts silently or a database
// cannot take: a key given twice (JSON.parse keeps the last one), nesting deeper than the service
// handles, numbers that do not survive the round trip through a JavaScript number. One pass over
// the text, no recursion, so a hostile document costs time proportional to its size only.
// Anything that is not valid JSON is left to the parser to refuse.

/** How deep containers (objects and arrays) may nest in any JSON body, the body itself being 1. */
export const MAX_BODY_DEPTH = 100

/** Largest magnitude a JSON number may have: beyond 2^53 - 1 JavaScript rounds integers. */
export const MAX_NUMBER = Number.MAX_SAFE_INTEGER

export type JsonTextProblem =
  | { kind: 'duplicate-key', path: string[] }
  | { kind: 'too-deep', path: string[], limit: number }
  | { kind: 'unsafe-number', path: string[], literal: string }

interface Frame {
  /** Keys already seen in this object (a list while short: cheaper than a set); undefined for an array. */
  keys?: string[] | Set<string>
  /** In an object, the key the value being read sits at. */
  key: string
  /** In an array, the index of the value being read. */
  index: number
}

// Up to this many keys an object's keys are searched in a list; past it, in a set.
const SHORT_KEY_LIST = 16

const STRING = /"[^"\\]*(?:\\.[^"\\]*)*"/y
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
// Integers of at most 15 digits are always exact: no need to convert them.
const SHORT_INTEGER = /^-?\d{1,15}$/

// Where the string starting at `at` ends (after its closing quote), or -1 when it is not one.
// A sticky test allocates nothing: most strings are values, which need no more than skipping.
function stringEnd (text: string, at: number): number {
  STRING.lastIndex = at
  return STRING.test(text) ? STRING.lastIndex : -1
}

// The value of the string text[at, end), escapes decoded; undefined when an escape is invalid.
function stringValue (text: string, at: number, end: number): string | undefined {
  const raw = text.slice(at + 1, end - 1)
  if (!raw.includes('\\')) return raw
  try {
    return JSON.parse(text.slice(at, end)) as string
  } catch {
    return undefined
  }
}

/** Whether a JSON number literal's value is a number JavaScript holds exactly enough (|n| <= 2^53 - 1). */
export function isSafeNumberLiteral (literal: string): boolean {
  if (SHORT_INTEGER.test(literal)) return true
  return Math.abs(Number(literal)) <= MAX_NUMBER
}

/**
 * The first problem of `text`, or undefined when it has none (or is not valid JSON: the parser
 * says so). `path` is the keys and indexes from the top to where the problem is.
 */
export function findJsonTextProblem (text: string, maxDepth: number = MAX_BODY_DEPTH): JsonTextProblem | undefined {
  const stack: Frame[] = []
  const path = (): string[] => stack.map((f) => f.keys === undefined ? String(f.index) : f.key)
  let i = 0
  const n = text.length
  while (i < n) {
    const c = text.charCodeAt(i)
    // Whitespace, commas and colons carry no meaning the parser does not check itself.
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x3a) { i++; continue }
    const top = stack[stack.length - 1]
    if (c === 0x2c) { // ,
      if (top !== undefined && top.keys === undefined) top.index++
      i++
      continue
    }
    if (c === 0x7b || c === 0x5b) { // { [
      if (stack.length >= maxDepth) return { kind: 'too-deep', path: path(), limit: maxDepth }
      stack.push(c === 0x7b ? { keys: [], key: '', index: 0 } : { key: '', index: 0 })
      i++
      continue
    }
    if (c === 0x7d || c === 0x5d) { // } ]
      stack.pop()
      i++
      continue
    }
    if (c === 0x22) { // "
      // In an object a string is a key when it follows `{` or `,`; the parser checks the syntax,
      // so here a string is a key exactly when a ':' follows it.
      const start = i
      i = stringEnd(text, start)
      if (i < 0) return undefined
      if (top?.keys !== undefined) {
        let j = i
        while (j < n && (text.charCodeAt(j) === 0x20 || text.charCodeAt(j) === 0x0a || text.charCodeAt(j) === 0x0d || text.charCodeAt(j) === 0x09)) j++
        if (text.charCodeAt(j) === 0x3a) {
          const key = stringValue(text, start, i)
          if (key === undefined) return undefined
          top.key = key
          const keys = top.keys
          if (Array.isArray(keys)) {
            if (keys.includes(key)) return { kind: 'duplicate-key', path: path() }
            keys.push(key)
            if (keys.length > SHORT_KEY_LIST) top.keys = new Set(keys)
          } else {
            if (keys.has(key)) return { kind: 'duplicate-key', path: path() }
            keys.add(key)
          }
        }
      }
      continue
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) { // - 0-9
      NUMBER.lastIndex = i
      if (!NUMBER.test(text)) return undefined
      const literal = text.slice(i, NUMBER.lastIndex)
      if (!isSafeNumberLiteral(literal)) return { kind: 'unsafe-number', path: path(), literal }
      i = NUMBER.lastIndex
      continue
    }
    // true, false, null, or something the parser will refuse.
    i++
  }
  return undefined
}

/** A path for a message: `body/meta/a/0`, at most `segments` deep and each segment shortened. */
export function describePath (root: string, path: readonly string[], segments = 8): string {
  const shown = path.slice(0, segments).map((p) => {
    const printable = p.replace(/[^\x20-\x7e]/g, '?')
    return printable.length > 40 ? `${printable.slice(0, 40)}...` : printable
  })
  return [root, ...shown].join('/') + (path.length > segments ? '/...' : '')
}

/**
 * The path to the first string (value or key) in `value` that holds a NUL character (U+0000),
 * which PostgreSQL cannot store in text; undefined when there is none. Iterative.
 */
export function findNulCharacter (value: unknown): string[] | undefined {
  const stack: Array<{ value: unknown, path: string[] }> = [{ value, path: [] }]
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const v = item.value
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return item.path
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: [...item.path, String(i)] })
    } else if (typeof v === 'object' && v !== null) {
      const entries = Object.entries(v)
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i] as [string, unknown]
        if (key.includes('\u0000')) return [...item.path, key]
        stack.push({ value: child, path: [...item.path, key] })
      }
    }
  }
  return undefined
}
