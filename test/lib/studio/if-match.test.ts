import t from 'tap'
import { expectedVersions, matchesVersion, parseVersionIfMatch, versionEtag } from '../../../lib/studio/if-match.js'

t.test('the ETag of a version is the version quoted', async (t) => {
  t.equal(versionEtag(7), '"7"')
  t.same(parseVersionIfMatch(versionEtag(7)), { ok: true, value: [7] }, 'and reads back')
})

t.test('If-Match: absent or * is unconditional; quoted versions are the versions expected', async (t) => {
  const cases: Array<[string | undefined, number[] | undefined]> = [
    [undefined, undefined],
    ['*', undefined],
    [' * ', undefined],
    ['"1"', [1]],
    ['"42"', [42]],
    [' "3" ', [3]],
    ['"1", "2"', [1, 2]],
    ['"1","2",\t"9"', [1, 2, 9]],
    ['"1", , "2",', [1, 2]],
    ['"2147483647"', [2147483647]],
    // Tags that are not one of our versions can never match: an empty list refuses every write.
    ['W/"3"', []],
    ['"3", W/"4"', [3]],
    ['"abc"', []],
    ['""', []],
    ['"0"', []],
    ['"01"', []],
    ['"-1"', []],
    ['"1.5"', []],
    ['"2147483648"', []],
    ['"99999999999999"', []]
  ]
  for (const [header, value] of cases) {
    t.same(parseVersionIfMatch(header), { ok: true, value }, JSON.stringify(header))
  }
})

t.test('If-Match that is not a list of quoted tags is refused with a reason', async (t) => {
  for (const header of ['', '   ', '3', '"3', '3"', '"3" "4"', '"3";', 'W/3', 'w/"3"', '*, "3"', '"a"b"', ',', '"3" x']) {
    const result = parseVersionIfMatch(header)
    t.equal(result.ok, false, JSON.stringify(header))
    if (!result.ok) t.match(result.reason, /If-Match must be "\*" or .*quoted ETags/)
  }
})

t.test('a body version narrows If-Match, and must agree with it', async (t) => {
  t.same(expectedVersions(undefined, undefined), { ok: true, value: undefined })
  t.same(expectedVersions([1, 2], undefined), { ok: true, value: [1, 2] })
  t.same(expectedVersions(undefined, 4), { ok: true, value: [4] })
  t.same(expectedVersions([3, 4], 4), { ok: true, value: [4] })
  const clash = expectedVersions([3], 4)
  t.equal(clash.ok, false)
  if (!clash.ok) t.match(clash.reason, /update\.version \(4\) contradicts If-Match/)
  t.equal(expectedVersions([], 1).ok, false)
})

t.test('matchesVersion', async (t) => {
  t.ok(matchesVersion(undefined, 5))
  t.ok(matchesVersion([4, 5], 5))
  t.notOk(matchesVersion([4], 5))
  t.notOk(matchesVersion([], 5))
})
