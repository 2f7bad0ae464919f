import t from 'tap'
import { parseIfMatch, quotedEtag } from '../../../lib/http/if-match.js'

const upper = (opaque: string): string | undefined => /^[a-z]+$/.test(opaque) ? opaque.toUpperCase() : undefined

t.test('If-Match reads the strong tags the resource knows, through its reader', async (t) => {
  t.equal(quotedEtag(3), '"3"')
  t.equal(quotedEtag('ab'), '"ab"')
  t.same(parseIfMatch(undefined, upper, '"x"'), { ok: true, value: undefined }, 'no header: unconditional')
  t.same(parseIfMatch('*', upper, '"x"'), { ok: true, value: undefined }, '*: unconditional')
  t.same(parseIfMatch('"ab", W/"cd", "12", "ef"', upper, '"x"'), { ok: true, value: ['AB', 'EF'] }, 'weak and unknown tags left out')
  t.same(parseIfMatch('"a,b"', upper, '"x"'), { ok: true, value: [] }, 'a comma inside a tag is part of it')
  const bad = parseIfMatch('ab', upper, '"<example>"')
  t.same(bad, { ok: false, reason: 'If-Match must be "*" or a comma-separated list of quoted ETags, such as "<example>" (with the quotes)' })
})
