import t from 'tap'
import { blobEtag, parseBlobIfMatch } from '../../../lib/git/etag.js'

const A = 'a'.repeat(40)
const B = '0123456789abcdef0123456789abcdef01234567'

t.test('If-Match names blob ids; anything else never matches or is malformed', async (t) => {
  t.equal(blobEtag(A), `"${A}"`)
  t.same(parseBlobIfMatch(undefined), { ok: true, value: undefined }, 'no header: unconditional')
  t.same(parseBlobIfMatch(' * '), { ok: true, value: undefined }, '*: unconditional')
  t.same(parseBlobIfMatch(`"${A}"`), { ok: true, value: [A] })
  t.same(parseBlobIfMatch(`"${A}", "${B}" ,`), { ok: true, value: [A, B] }, 'a list')
  t.same(parseBlobIfMatch(`W/"${A}"`), { ok: true, value: [] }, 'a weak tag never matches')
  t.same(parseBlobIfMatch('"3"'), { ok: true, value: [] }, 'a tag that is no blob id never matches')
  t.same(parseBlobIfMatch(`"${A.toUpperCase()}"`), { ok: true, value: [] }, 'blob ids are lower-case hex')
  for (const bad of [A, '', ',', `"${A}`, `"${A}" x`, '"a b"']) {
    const r = parseBlobIfMatch(bad)
    t.notOk(r.ok, `malformed: ${JSON.stringify(bad)}`)
    if (!r.ok) t.match(r.reason, /^If-Match must be/)
  }
})
