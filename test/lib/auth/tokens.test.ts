import t from 'tap'
import fc from 'fast-check'
import { generateClientId, generateToken, isWellFormedToken, sameDigest, tokenDigest, withoutQueryToken } from '../../../lib/auth/tokens.js'

t.test('tokens: 256 random bits, kept as a SHA-256', async (t) => {
  const token = generateToken()
  t.ok(isWellFormedToken(token))
  t.equal(Buffer.from(token, 'base64url').length, 32)
  t.not(generateToken(), token)
  t.match(tokenDigest(token), /^[0-9a-f]{64}$/)
  t.ok(sameDigest(tokenDigest(token), tokenDigest(token)))
  t.notOk(sameDigest(tokenDigest(token), tokenDigest(generateToken())))
  t.notOk(sameDigest('', ''))
  t.match(generateClientId(), /^[0-9a-f]{24}$/)
  for (const bad of ['', token + 'x', token.slice(1), `${token.slice(0, 42)}=`, ' '.repeat(43)]) t.notOk(isWellFormedToken(bad), bad)
})

t.test('the query token is left out of a logged URL, the rest kept', async (t) => {
  t.equal(withoutQueryToken('/a?token=abc'), '/a')
  t.equal(withoutQueryToken('/a?x=1&token=abc&y=2'), '/a?x=1&y=2')
  t.equal(withoutQueryToken('/a?%74oken=abc&tokens=1'), '/a?tokens=1')
  t.equal(withoutQueryToken('/a?token'), '/a')
  t.equal(withoutQueryToken('/a'), '/a')
  t.equal(withoutQueryToken('/a?%zz=1'), '/a?%zz=1')
  fc.assert(fc.property(fc.string(), fc.string(), (before, value) => {
    const url = `/p?${encodeURIComponent(before)}=1&token=${encodeURIComponent('SECRET' + value)}`
    return !withoutQueryToken(url).includes('SECRET')
  }))
})
