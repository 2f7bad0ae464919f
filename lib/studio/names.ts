// Names of imported documents: a name already taken gets the first free numeric suffix,
// "Name (1)", "Name (2)", ..., shortened so the result still fits the name's length limit.
import { likePattern } from '../lists/sql.js'

/** `base` with suffix `n` (0: no suffix), at most `maxLength` characters (code points). */
export function suffixedName (base: string, n: number, maxLength: number): string {
  if (n === 0) return base
  const suffix = ` (${n})`
  const room = Math.max(0, maxLength - suffix.length)
  const chars = Array.from(base) // by code point, so a surrogate pair is never split
  return (chars.length <= room ? base : chars.slice(0, room).join('')) + suffix
}

// Suffixes up to this many digits keep a base of up to maxLength - 3 - this many characters whole.
const SUFFIX_DIGITS = 10

/**
 * A LIKE pattern (escape character `\`) matching every suffixed form of `base` (suffixes of up
 * to ten digits): `base (...` while those keep the base whole, else the base's first characters
 * and anything. It may match other names too; the caller keeps those it compares equal.
 */
export function suffixedNamesPattern (base: string, maxLength: number): string {
  const keep = Math.max(0, maxLength - 3 - SUFFIX_DIGITS)
  const chars = Array.from(base)
  return chars.length <= keep ? `${likePattern(base, false, false)} (%` : likePattern(chars.slice(0, keep).join(''), false, true)
}

/**
 * Gives out the names of one base in turn: each the first suffixed form (from no suffix on) that
 * is neither `taken` (in the table) nor in `used` (given out earlier in the same import, under
 * any base); each name given out joins `used`. Suffixes only grow, so giving out k names costs
 * k plus the number of taken forms skipped.
 */
export function nameAllocator (base: string, taken: ReadonlySet<string>, used: Set<string>, maxLength: number): () => string {
  let n = 0
  return () => {
    for (; ; n++) {
      const name = suffixedName(base, n, maxLength)
      if (taken.has(name) || used.has(name)) continue
      used.add(name)
      n++
      return name
    }
  }
}
