// Adapter ids and their look-alikes for property tests (lib/orchestrator/adapter-id.ts).
import fc from 'fast-check'

/** Ids as users write them: words of letters (some beyond ASCII) and digits, with punctuation and spaces between. */
export const adapterIdArb = fc.array(
  fc.string({ minLength: 1, maxLength: 8, unit: fc.constantFrom(...'abcxyzABCXYZ019éüßñçÅΣσςøæİıǅ'.split('')) }),
  { minLength: 1, maxLength: 4 }
).chain((words) => fc.constantFrom(' ', '-', '_', '.').map((sep) => words.join(sep)))

// Full-width forms of ASCII letters and digits (U+FF01..U+FF5E), which NFKC maps back.
const fullWidth = (s: string): string => s.replace(/[!-~]/g, (c) => String.fromCodePoint(c.codePointAt(0)! - 0x21 + 0xff01))

/** A look-alike of `id`: case changed, spaces doubled, another Unicode form, full-width letters. */
export const lookAlikeOf = (id: string): fc.Arbitrary<string> => fc.record({
  caseFlips: fc.array(fc.boolean(), { minLength: id.length, maxLength: id.length }),
  spaces: fc.constantFrom(' ', '  ', '   ', '\u00a0', '\u3000'),
  form: fc.constantFrom('NFC', 'NFD', 'NFKC', 'NFKD'),
  wide: fc.boolean()
}).map(({ caseFlips, spaces, form, wide }) => {
  let s = [...id].map((c, i) => caseFlips[i] === true ? (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) : c).join('')
  s = s.replace(/ /g, spaces).normalize(form as 'NFC')
  return wide ? fullWidth(s) : s
})
