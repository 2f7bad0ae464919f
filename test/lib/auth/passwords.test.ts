import t from 'tap'
import { generatePassword, hashPassword, verifyPassword } from '../../../lib/auth/passwords.js'
import { CredentialCache, recheckVerdict } from '../../../lib/auth/credential-cache.js'

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

t.test('credential cache digests a credential once per connection that repeats it', async (t) => {
  const cache = new CredentialCache<string>({ ttlMs: 100 })
  const digest = CredentialCache.key
  let digests = 0
  CredentialCache.key = (credential) => { digests++; return digest(credential) }
  t.teardown(() => { CredentialCache.key = digest })
  const connection = {}
  const other = {}
  cache.set('Basic YW5uOnB3', 'ann', 'ann-user')
  cache.set('Basic Ym9iOnB3', 'bob', 'bob-user')
  digests = 0
  t.equal(cache.lookup('Basic YW5uOnB3', connection)?.value, 'ann-user')
  t.equal(cache.lookup('Basic YW5uOnB3', connection)?.value, 'ann-user')
  t.equal(digests, 1, 'the repeat on one connection is not digested again')
  t.equal(cache.lookup('Basic Ym9iOnB3', connection)?.value, 'bob-user', 'another credential on that connection is its own')
  t.equal(cache.lookup('Basic YW5uOm90aGVy', connection), undefined, 'a wrong one is not taken for the last one')
  t.equal(cache.lookup('Basic YW5uOnB3', other)?.value, 'ann-user')
  t.equal(digests, 4, 'each change of credential, and each new connection, is digested')
  cache.lookup('Basic YW5uOnB3', other)
  cache.forget('ann')
  t.equal(cache.lookup('Basic YW5uOnB3', other), undefined, 'forgetting the user holds for connections that sent it')
})

t.test('a re-check keeps a credential while its user\'s row holds the hash it matched', async (t) => {
  const hash = await hashPassword('pw')
  const checkedAgainst = CredentialCache.key(hash)
  const cases: Array<[string, Parameters<typeof recheckVerdict>[1], ReturnType<typeof recheckVerdict>]> = [
    ['same hash, enabled', { passwordHash: hash, user: { disabled: false } }, 'keep'],
    ['same hash, disabled', { passwordHash: hash, user: { disabled: true } }, 'drop'],
    ['user gone', undefined, 'drop'],
    ['password set again', { passwordHash: await hashPassword('pw'), user: { disabled: false } }, 'verify'],
    ['password set again, disabled', { passwordHash: await hashPassword('other'), user: { disabled: true } }, 'drop']
  ]
  for (const [name, current, expected] of cases) t.equal(recheckVerdict(checkedAgainst, current), expected, name)
})
