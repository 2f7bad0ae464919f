import t from 'tap'
import { basicAuthorization, basicUsername, parseBasicAuthorization } from '../../../lib/auth/basic-auth-header.js'

t.test('username of a Basic header', async (t) => {
  const b64 = (s: string): string => Buffer.from(s).toString('base64')
  t.equal(basicUsername(`Basic ${b64('ann:secret:with:colons')}`), 'ann')
  t.equal(basicUsername(`basic   ${b64('bob:x')}  `), 'bob')
  t.equal(basicUsername(`Basic ${b64('no-colon')}`), '')
  t.equal(basicUsername('Bearer abc'), '')
  t.equal(basicUsername('Basic !!'), '')
  t.equal(basicUsername(undefined), '')
})

t.test('builds the header it parses', async (t) => {
  t.equal(basicAuthorization('ann', 'pässword'), 'Basic ' + Buffer.from('ann:pässword', 'utf8').toString('base64'))
  t.equal(basicUsername(basicAuthorization('ann', 'x:y')), 'ann')
})

t.test('credentials of a Basic header: the password keeps its colons', async (t) => {
  t.same(parseBasicAuthorization(basicAuthorization('ann', 'se:cr:et')), { username: 'ann', password: 'se:cr:et' })
  t.same(parseBasicAuthorization(basicAuthorization('ann', '')), { username: 'ann', password: '' })
  t.equal(parseBasicAuthorization('Basic ' + Buffer.from('no-colon').toString('base64')), undefined)
  t.equal(parseBasicAuthorization('Bearer abc'), undefined)
  t.equal(parseBasicAuthorization(undefined), undefined)
})
