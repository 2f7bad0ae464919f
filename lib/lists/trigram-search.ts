// Which part of a `contains` value the trigram index (pg_trgm, GIN) looks up. For
// `ILIKE '%value%'` the index intersects the posting lists of every trigram of the value and
// decodes the list of a trigram most names share almost whole, whatever else the value holds.
// A part of the value without such trigrams, looked up in the index and followed by the whole
// value as a filter, finds the same rows (a name containing the value contains every part of it)
// without reading those lists. Measured at 100,000 groups named "Group N" (docs/benchmarks.md).
//
// The trigrams are those pg_trgm extracts from a LIKE pattern: each run of letters and digits,
// lower-cased, with two blanks before it unless it starts the pattern and one after it unless it
// ends it. pg_trgm keeps a trigram holding a character outside ASCII as a hash, which is not
// computed here: such a trigram is never found frequent, and a part may keep it as the whole
// value does. Whatever the part, the rows found are the same; only what the index reads differs.

/**
 * A trigram at least this share of the values hold is left out of the look-up: it narrows the
 * rows found by at most half, and its posting list holds at least half of the table.
 */
export const FREQUENT_TRIGRAM_SHARE = 0.5

const WORD = /[\p{L}\p{N}]+/gu

interface Word { start: number, end: number, chars: string[] }

function trigramsOf (chars: string[], padLeft: boolean, padRight: boolean): string[] {
  const padded = [...(padLeft ? [' ', ' '] : []), ...chars, ...(padRight ? [' '] : [])]
  const out: string[] = []
  for (let i = 0; i + 3 <= padded.length; i++) out.push(padded.slice(i, i + 3).join(''))
  return out
}

// The separator beside a word, whole: never half of a surrogate pair, which the part would then
// hold alone (and the database would read as another character).
const charAt = (value: string, i: number): string => String.fromCodePoint(value.codePointAt(i) as number)
const charBefore = (value: string, i: number): string =>
  /[\uDC00-\uDFFF]/.test(value[i - 1] as string) && i >= 2 ? value.slice(i - 2, i) : value.slice(i - 1, i)

/** The trigrams pg_trgm looks up for `ILIKE '%value%'`. */
export function containsTrigrams (value: string): Set<string> {
  const out = new Set<string>()
  for (const m of value.matchAll(WORD)) {
    const start = m.index
    const end = start + m[0].length
    for (const t of trigramsOf([...m[0].toLowerCase()], start > 0, end < value.length)) out.add(t)
  }
  return out
}

/**
 * The part of `value` to look up in the trigram index instead of the whole: the run of words
 * (with the separator before and after it where that adds trigrams) with the most trigrams,
 * none of them in `frequent`. Undefined when the whole value has no frequent trigram, or when
 * no part without one has any trigram (the value is then looked up whole, as before).
 */
export function selectiveContainsPart (value: string, frequent: ReadonlySet<string>): string | undefined {
  if (frequent.size === 0) return undefined
  const all = containsTrigrams(value)
  if (![...all].some((t) => frequent.has(t))) return undefined
  const words: Word[] = [...value.matchAll(WORD)].map((m) => ({ start: m.index, end: m.index + m[0].length, chars: [...m[0].toLowerCase()] }))
  // A word's trigrams for each padding, and whether any of them is frequent.
  const score = (w: Word, left: boolean, right: boolean): number | undefined => {
    const ts = trigramsOf(w.chars, left, right)
    return ts.some((t) => frequent.has(t)) ? undefined : ts.length
  }
  const inner = words.map((w) => score(w, true, true))
  let best: { from: number, to: number, trigrams: number } | undefined
  for (let i = 0; i < words.length; i++) {
    const first = words[i] as Word
    for (const left of first.start > 0 ? [false, true] : [false]) {
      let middle = 0 // trigrams of the fully padded words strictly between i and j
      for (let j = i; j < words.length; j++) {
        const last = words[j] as Word
        if (j > i + 1) {
          const s = inner[j - 1]
          if (s === undefined) break // every longer run holds that word, padded, too
          middle += s
        }
        for (const right of last.end < value.length ? [false, true] : [false]) {
          let trigrams: number | undefined
          if (j === i) trigrams = score(first, left, right)
          else {
            const head = score(first, left, true)
            const tail = score(last, true, right)
            trigrams = head === undefined || tail === undefined ? undefined : head + middle + tail
          }
          if (trigrams === undefined || trigrams === 0) continue
          if (best === undefined || trigrams > best.trigrams) {
            best = { from: left ? first.start - charBefore(value, first.start).length : first.start, to: right ? last.end + charAt(value, last.end).length : last.end, trigrams }
          }
        }
      }
    }
  }
  return best === undefined ? undefined : value.slice(best.from, best.to)
}
