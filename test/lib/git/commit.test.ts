import t from 'tap'
import { canonicalJson, commitAuthor, commitMessage, defaultCommitMessage, FALLBACK_EMAIL_DOMAIN, MAX_COMMIT_MESSAGE_LENGTH } from '../../../lib/git/commit.js'

t.test('canonical JSON: 2-space indent, a trailing newline, keys in the order given', async (t) => {
  t.equal(canonicalJson({}), '{}\n')
  t.equal(canonicalJson({ b: 1, a: [1, { c: null }], s: 'é\n' }), '{\n  "b": 1,\n  "a": [\n    1,\n    {\n      "c": null\n    }\n  ],\n  "s": "é\\n"\n}\n')
})

t.test('commit messages: given and cleaned, or the default', async (t) => {
  t.equal(defaultCommitMessage('projects/a.json'), 'Initialize project projects/a.json')
  t.same(commitMessage(undefined, 'projects/a.json'), { ok: true, value: 'Initialize project projects/a.json\n' })
  const good: Array<[string, string]> = [
    ['Add site', 'Add site\n'],
    ['Add site\n', 'Add site\n'],
    ['Add site\r\n\r\nBody line\r\n', 'Add site\n\nBody line\n'],
    ['Old\rMac', 'Old\nMac\n'],
    ['\n\n  \nSubject\n\n\n', 'Subject\n'],
    ['  indented subject  ', '  indented subject\n'],
    ['x'.repeat(MAX_COMMIT_MESSAGE_LENGTH), `${'x'.repeat(MAX_COMMIT_MESSAGE_LENGTH)}\n`]
  ]
  for (const [input, expected] of good) t.same(commitMessage(input, 'p'), { ok: true, value: expected }, JSON.stringify(input).slice(0, 40))
  const bad: Array<[string, RegExp]> = [
    ['', /blank/],
    [' \n\t\r\n', /blank/],
    ['a\u0000b', /NUL/],
    ['x'.repeat(MAX_COMMIT_MESSAGE_LENGTH + 1), /at most 10000 characters/]
  ]
  for (const [input, reason] of bad) {
    const result = commitMessage(input, 'p')
    t.notOk(result.ok)
    if (!result.ok) t.match(result.reason, reason)
  }
})

t.test('the author is the calling user; an address Git cannot carry falls back', async (t) => {
  const now = new Date('2025-03-01T12:00:30.900Z')
  const timestamp = Math.floor(now.getTime() / 1000)
  t.same(commitAuthor({ username: 'ann', email: 'ann@example.com' }, now), { name: 'ann', email: 'ann@example.com', timestamp, timezoneOffset: 0 })
  t.same(commitAuthor({ username: 'ann', email: null }, now).email, `ann@${FALLBACK_EMAIL_DOMAIN}`)
  t.same(commitAuthor({ username: 'ann', email: '' }, now).email, `ann@${FALLBACK_EMAIL_DOMAIN}`)
  t.same(commitAuthor({ username: 'ann', email: 'a<b@c>' }, now).email, `ann@${FALLBACK_EMAIL_DOMAIN}`, "'<' or '>' would break the ident line")
  t.same(commitAuthor({ username: 'ann', email: 'a@b\nc' }, now).email, `ann@${FALLBACK_EMAIL_DOMAIN}`)
  t.same(commitAuthor({ username: 'jane@corp', email: null }, now), { name: 'jane@corp', email: `jane.corp@${FALLBACK_EMAIL_DOMAIN}`, timestamp, timezoneOffset: 0 })
  t.equal(commitAuthor({ username: 'a<b>\nc', email: null }, now).name, 'abc', 'never a character that breaks the ident line')
})
