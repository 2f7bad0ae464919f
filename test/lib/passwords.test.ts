import t from 'tap'
import { generatePassword, hashPassword, verifyPassword } from '../../lib/passwords.js'
import { CredentialCache } from '../../lib/credential-cache.js'

t.test('hashes verify only the right password', async (t) => {
  const hash = await hashPassword('s3cret pass')
  t.match(hash, /^scrypt\$16384\$8\$1\$[\w-]+\$[\w-]+$/)
  t.notMatch(hash, /s3cret/)
  t.equal(await verifyPassword('s3cret pass', hash), true)
  t.equal(await verifyPassword('s3cret pasS', hash), false)
  t.not(await hashPassword('s3cret pass'), hash, 'salted')
  t.equal(await verifyPassword('x', 'plain-text'), false)
  t.equal(await verifyPassword('x', 'scrypt$16384$8$1$AAAA$AAAA'), false)
})

t.test('generated passwords are long and distinct', async (t) => {
  const a = generatePassword()
  t.ok(a.length >= 24)
  t.not(a, generatePassword())
})

t.test('credential cache expires, forgets a user, and never keys by the password', async (t) => {
  let now = 1000
  const cache = new CredentialCache<string>({ ttlMs: 100, maxEntries: 2, now: () => now })
  cache.set('Basic YW5uOnB3', 'ann', 'ann-user')
  t.equal(cache.get('Basic YW5uOnB3'), 'ann-user')
  t.equal(cache.get('Basic YW5uOm90aGVy'), undefined)
  t.notMatch(CredentialCache.key('Basic YW5uOnB3'), /YW5uOnB3/, 'keyed by a digest')
  now += 100
  t.equal(cache.get('Basic YW5uOnB3'), undefined, 'expired')
  cache.set('Basic YW5uOnB3', 'ann', 'ann-user')
  cache.set('Basic Ym9iOnB3', 'bob', 'bob-user')
  cache.forget('ann')
  t.equal(cache.get('Basic YW5uOnB3'), undefined, 'forgotten')
  t.equal(cache.get('Basic Ym9iOnB3'), 'bob-user')
  cache.set('c', 'cy', 'c1')
  cache.set('d', 'dee', 'd1')
  t.equal(cache.size, 2, 'bounded')
  t.equal(cache.get('Basic Ym9iOnB3'), undefined, 'oldest dropped first')
  const begun = cache.generation('cy')
  cache.forget('cy')
  cache.set('c', 'cy', 'c-read-before-the-change', begun)
  t.equal(cache.get('c'), undefined, 'a verification begun before its user changed is not kept')
  cache.set('c', 'cy', 'c2', cache.generation('cy'))
  t.equal(cache.get('c'), 'c2', 'one begun after it is')
  const off = new CredentialCache<string>({ ttlMs: 0 })
  off.set('Basic YW5uOnB3', 'ann', 'x')
  t.equal(off.get('Basic YW5uOnB3'), undefined, 'a TTL of 0 turns caching off')
})

t.test('credential cache asks once, past half of an entry\'s life, for it to be verified again', async (t) => {
  let now = 0
  const cache = new CredentialCache<string>({ ttlMs: 100, now: () => now })
  cache.set('Basic YW5uOnB3', 'ann', 'ann-user')
  t.same(cache.lookup('Basic YW5uOnB3'), { value: 'ann-user', refresh: false }, 'young: no')
  now = 50
  t.same(cache.lookup('Basic YW5uOnB3'), { value: 'ann-user', refresh: true }, 'past half: yes')
  t.same(cache.lookup('Basic YW5uOnB3'), { value: 'ann-user', refresh: false }, 'only once')
  now = 60
  cache.set('Basic YW5uOnB3', 'ann', 'ann-user-again')
  now = 105
  t.same(cache.lookup('Basic YW5uOnB3'), { value: 'ann-user-again', refresh: false }, 'verified again: a new life')
  cache.drop('Basic YW5uOnB3')
  t.equal(cache.lookup('Basic YW5uOnB3'), undefined, 'dropped')
})
