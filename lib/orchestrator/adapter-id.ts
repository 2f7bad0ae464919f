// The key under which adapter ids are unique: two names that read the same to a person ("Local NSO"
// and "Local  NSO", "ZÜRICH" and "zürich", full-width "ＮＳＯ" and "NSO", "Zürich" composed or
// decomposed) fold to one key, so at most one of them can exist (docs/orchestrator.md).

/**
 * NFKC (compatibility forms: full-width letters, ligatures, other spaces), case folded (upper then
 * lower, so that "ß" and "SS", "ς" and "σ" meet), NFKC again (case mapping can leave a string
 * unnormalised), runs of white space made one space, trimmed. Repeated until it no longer changes,
 * so that folding a key gives the key back.
 */
export function foldAdapterId (id: string): string {
  let key = id
  for (let round = 0; round < 8; round++) {
    const next = key.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC').replace(/\s+/gu, ' ').trim()
    if (next === key) return key
    key = next
  }
  return key
}
