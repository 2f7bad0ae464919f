import t from 'tap'
import { SecretKeyMismatch, deriveKey, generateSecret, keyId, open, seal } from '../../../lib/secrets/secret-box.js'

const key = deriveKey('a-secret-of-at-least-thirty-two-characters')
const other = deriveKey('another-secret-of-at-least-thirty-two-chars')

t.test('seal then open gives the password back, and the sealed text does not show it', async (t) => {
  for (const password of ['admin', 'pässwörd with spaces: and colons', '', 'x'.repeat(1024)]) {
    const sealed = seal(key, password, 'nso-lab')
    t.equal(open(key, sealed, 'nso-lab'), password)
    if (password.length > 0) t.notOk(sealed.includes(password), 'not in clear')
    t.match(sealed, /^v1\.[\w-]{8}\.[\w-]+\.[\w-]*\.[\w-]+$/)
  }
})

t.test('every seal differs (fresh IV)', async (t) => {
  t.not(seal(key, 'admin', 'a'), seal(key, 'admin', 'a'))
})

t.test('a key is 32 bytes, derived the same way every time, and named by a stable id', async (t) => {
  t.equal(key.length, 32)
  t.same(deriveKey('a-secret-of-at-least-thirty-two-characters'), key)
  t.equal(keyId(key), keyId(deriveKey('a-secret-of-at-least-thirty-two-characters')))
  t.not(keyId(key), keyId(other))
  t.match(generateSecret(), /^[\w-]{43}$/)
  t.not(generateSecret(), generateSecret())
})

t.test('another key, another record, tampering or garbage: SecretKeyMismatch, never a wrong password', async (t) => {
  const sealed = seal(key, 'admin', 'nso-lab')
  t.throws(() => open(other, sealed, 'nso-lab'), SecretKeyMismatch)
  t.throws(() => open(other, sealed, 'nso-lab'), { message: /sealed under key .* configured key is/ })
  t.throws(() => open(key, sealed, 'nso-other'), { name: 'SecretKeyMismatch', message: /does not authenticate/ })
  const parts = sealed.split('.')
  const flipped = Buffer.from(parts[3] as string, 'base64url')
  flipped[0] = (flipped[0] as number) ^ 1
  parts[3] = flipped.toString('base64url')
  t.throws(() => open(key, parts.join('.'), 'nso-lab'), SecretKeyMismatch)
  t.throws(() => open(key, 'admin', 'nso-lab'), { message: /known format/ })
  t.throws(() => open(key, 'v2.a.b.c.d', 'nso-lab'), SecretKeyMismatch)
})
