// Names of imported documents: a name already taken gets the first free numeric suffix,
// "Name (1)", "Name (2)", ..., shortened so the result still fits the name's length limit.

/** `base` with suffix `n` (0: no suffix), at most `maxLength` characters (code points). */
export function suffixedName (base: string, n: number, maxLength: number): string {
  if (n === 0) return base
  const suffix = ` (${n})`
  const room = Math.max(0, maxLength - suffix.length)
  const chars = Array.from(base) // by code point, so a surrogate pair is never split
  return (chars.length <= room ? base : chars.slice(0, room).join('')) + suffix
}

/** The names to try for `base`, from suffix `from` on, `count` of them. */
export function nameCandidates (base: string, from: number, count: number, maxLength: number): string[] {
  return Array.from({ length: count }, (_, i) => suffixedName(base, from + i, maxLength))
}

/** A LIKE/ILIKE pattern matching names that contain `text` literally (escape character `\`). */
export function containsPattern (text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}
