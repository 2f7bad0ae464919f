import t from 'tap'
import { basicUsername } from '../../lib/basic-auth-header.js'

t.test('username of a Basic header', async (t) => {
  const b64 = (s: string): string => Buffer.from(s).toString('base64')
  t.equal(basicUsername(`Basic ${b64('ann:secret:with:colons')}`), 'ann')
  t.equal(basicUsername(`basic   ${b64('bob:x')}  `), 'bob')
  t.equal(basicUsername(`Basic ${b64('no-colon')}`), '')
  t.equal(basicUsername('Bearer abc'), '')
  t.equal(basicUsername('Basic !!'), '')
  t.equal(basicUsername(undefined), '')
})
