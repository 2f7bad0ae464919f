import t from 'tap'
import { basicAuthorization, basicUsername } from '../../lib/basic-auth-header.js'

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
