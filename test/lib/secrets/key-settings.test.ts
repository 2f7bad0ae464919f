import t from 'tap'
import { checkKeySettings, keySettings } from '../../../lib/secrets/key-settings.js'
import { judgeKey, keyFingerprint, refusalMessage } from '../../../lib/secrets/fingerprint.js'

const A = 'a'.repeat(32)
const B = 'b'.repeat(32)

t.test('the key from SECRET_KEY or its old name, named as it was set', async (t) => {
  t.same(keySettings({}), { secret: undefined, variable: 'SECRET_KEY', previous: [], previousVariable: 'SECRET_KEY_PREVIOUS' })
  t.same(keySettings({ SECRET_KEY: A, SECRET_KEY_PREVIOUS: ` ${B} ,` }), { secret: A, variable: 'SECRET_KEY', previous: [B], previousVariable: 'SECRET_KEY_PREVIOUS' })
  t.same(keySettings({ ORCHESTRATOR_SECRET_KEY: A }),
    { secret: A, variable: 'ORCHESTRATOR_SECRET_KEY', previous: [], previousVariable: 'ORCHESTRATOR_SECRET_KEY_PREVIOUS' })
  t.same(keySettings({ ORCHESTRATOR_SECRET_KEY: A, SECRET_KEY_PREVIOUS: B }).previousVariable, 'SECRET_KEY_PREVIOUS')
  t.same(keySettings({ SECRET_KEY: A, ORCHESTRATOR_SECRET_KEY: A }).variable, 'SECRET_KEY', 'both names, one key')
  t.match(checkKeySettings({ SECRET_KEY: A, ORCHESTRATOR_SECRET_KEY: B }), { ok: false, reason: /SECRET_KEY and ORCHESTRATOR_SECRET_KEY \(its old name\)/ })
  t.throws(() => keySettings({ SECRET_KEY_PREVIOUS: A, ORCHESTRATOR_SECRET_KEY_PREVIOUS: B }), /SECRET_KEY_PREVIOUS/)
})

t.test('the fingerprint and what a start makes of it', async (t) => {
  const fingerprint = keyFingerprint(Buffer.alloc(32, 1))
  t.match(fingerprint, /^[0-9a-f]{64}$/)
  t.equal(keyFingerprint(Buffer.alloc(32, 1)), fingerprint, 'the same key, the same fingerprint')
  t.not(keyFingerprint(Buffer.alloc(32, 2)), fingerprint)
  t.equal(judgeKey(undefined, 'x', []), 'record')
  t.equal(judgeKey('x', 'x', ['y']), 'keep')
  t.equal(judgeKey('y', 'x', ['y']), 'accept')
  t.equal(judgeKey('z', 'x', ['y']), 'refuse')
  t.match(refusalMessage({ secret: A, variable: 'ORCHESTRATOR_SECRET_KEY', previousVariable: 'ORCHESTRATOR_SECRET_KEY_PREVIOUS' }),
    /^ORCHESTRATOR_SECRET_KEY is not the key .*ORCHESTRATOR_SECRET_KEY_PREVIOUS, then `npm run reseal`/)
  t.match(refusalMessage({ secret: undefined, variable: 'SECRET_KEY', previousVariable: 'SECRET_KEY_PREVIOUS' }), /^SECRET_KEY is not set/)
})
